import Hummingbird
import PostlyService

/// `GET /ap/posts/{postId}` and `/ap/posts/{postId}/{publication}`, the objects of a post's
/// first and later publications (see `FederationURLs.article`): the current one of a published
/// post as its `Article`; a deleted post's, or an earlier one, as a `Tombstone` with 410; a
/// draft's, a scheduled post's or an unknown one 404.
struct ObjectController: Sendable {
    let documents: ActivityDocuments
    let articles: ArticleRepository

    func addRoutes(to router: Router<PostlyRequestContext>) {
        router.get("ap/posts/:postId", use: article)
        router.get("ap/posts/:postId/:publication", use: article)
    }

    @Sendable func article(_ request: Request, context: PostlyRequestContext) async throws -> ActivityResponse {
        let postId = try context.parameters.require("postId")
        var publication: Int64?
        if let text = context.parameters.get("publication") {
            guard let number = Int64(text), number > 0, String(number) == text else { throw APIError.notFound("No such post here") }
            publication = number
        }
        switch try await articles.lookup(postId: postId, publication: publication) {
        case .published(let post):
            return ActivityResponse(document: documents.document(documents.article(post, publication: publication)))
        case .deleted(let at):
            let tombstone = documents.tombstone(postId: postId, publication: publication, deletedAt: at)
            return ActivityResponse(document: documents.document(tombstone), status: .gone)
        case .hidden:
            throw APIError.notFound("No such post here")
        }
    }
}
