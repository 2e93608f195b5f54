import Hummingbird
import PostlyService

/// `GET /ap/posts/{postId}`: a published post as its `Article`; a deleted one as a `Tombstone`
/// with 410; a draft, a scheduled post or an unknown id 404.
struct ObjectController: Sendable {
    let documents: ActivityDocuments
    let articles: ArticleRepository

    func addRoutes(to router: Router<PostlyRequestContext>) {
        router.get("ap/posts/:postId", use: article)
    }

    @Sendable func article(_ request: Request, context: PostlyRequestContext) async throws -> ActivityResponse {
        let postId = try context.parameters.require("postId")
        switch try await articles.lookup(postId: postId) {
        case .published(let post):
            return ActivityResponse(document: documents.document(documents.article(post)))
        case .deleted(let at):
            return ActivityResponse(document: documents.document(documents.tombstone(postId: postId, deletedAt: at)), status: .gone)
        case .hidden:
            throw APIError.notFound("No such post here")
        }
    }
}
