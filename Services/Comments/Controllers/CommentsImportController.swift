import Foundation
import Hummingbird
import PostlyEvents
import PostlyModels
import PostlyService

/// `POST /internal/import/comments` (`postly-import`; only with `POSTLY_IMPORT_TOKEN`, behind
/// `ImportGate`): an earlier deployment's comments, insert-only by id, each with an imported
/// `comment.created`, the whole batch in one transaction.
struct CommentsImportController: Sendable {
    let repository: any CommentRepository
    let posts: PostLookup
    let writes: WriteUnit
    /// How long to wait for the events of posts the projection does not know yet.
    let postWait: Duration

    struct Batch: Decodable {
        var comments: [SentComment]
    }

    struct SentComment: Decodable {
        var id: String
        var postId: String
        var content: String
        var author: Author
        var createdAt: Date

        enum CodingKeys: String, CodingKey {
            case id = "_id", postId, content, author, createdAt
        }
    }

    func addRoutes(to imports: RouterGroup<PostlyRequestContext>?) {
        imports?.post("comments", use: importComments)
    }

    @Sendable func importComments(_ request: Request, context: PostlyRequestContext) async throws -> ImportOutcome {
        let batch = try await request.decodeImportBatch(as: Batch.self, context: context) { $0.comments.count }
        let ids = Set(batch.comments.map(\.postId))
        let known = try await posts.importedPosts(ids: ids, wait: postWait)
        // Behind (a broker down, a consumer late), not wrong: the importer sends only comments
        // of posts the posts service took, and sends the batch again.
        guard known.count == ids.count else {
            throw APIError.unavailable("\(ids.count - known.count) of the batch's posts have not reached the comments service yet")
        }
        return try await writes.write { transaction in
            var outcome = ImportOutcome()
            for sent in batch.comments {
                let stored = ImportCheck.problem(
                    ids: ["_id": sent.id, "author.userId": sent.author.userId],
                    texts: ["content": sent.content, "author.name": sent.author.name, "author.profilePicture": sent.author.profilePicture])
                if let stored {
                    outcome.reject(sent.id, stored)
                    continue
                }
                let post = known[sent.postId]!
                let comment = Comment(
                    id: sent.id, postId: post.id, content: sent.content, author: sent.author,
                    createdAt: sent.createdAt.inWholeMilliseconds)
                outcome.count(try await repository.importComment(comment, on: post, in: transaction), id: sent.id)
            }
            return outcome
        }
    }
}
