import PostlyModels
import PostlyService

/// The first answer to a `POST .../comments` with an `Idempotency-Key`, and the request it
/// answered, so a retry can be told from a different request under the same key.
struct IdempotentAnswer: Sendable, Hashable {
    var postId: String
    /// `content` exactly as the first request sent it.
    var requestContent: String
    var comment: Comment
}

enum CreateOutcome: Sendable, Hashable {
    case created(Comment)
    /// Another request with the same key got there first (concurrently).
    case keyTaken
}

/// The comments service's storage: comments, the projection of posts and users, idempotency
/// keys, and the events that go with each change (written in the same transaction).
protocol CommentRepository: Sendable {
    /// The projection's knowledge of a post, deleted ones included; nil when it has none.
    func post(id: String) async throws -> KnownPost?
    /// Oldest first; every comment when `page` is nil.
    func comments(postId: String, page: PageRequest?) async throws -> [Comment]
    /// The user's picture, when a user event told it.
    func profilePicture(userId: String) async throws -> String?
    /// The unexpired first answer for the user's key.
    func idempotentAnswer(userId: String, key: String) async throws -> IdempotentAnswer?
    /// Stores `comment`, its `comment.created` event and, with a key, the answer for retries.
    /// Throws 404 when the post was deleted meanwhile.
    func create(_ comment: Comment, on post: KnownPost, idempotencyKey: String?, requestContent: String) async throws -> CreateOutcome
    /// Deletes the comment of `post` with its `comment.deleted` event when `userId` wrote the
    /// comment or the post; throws 404 for a comment not on that post, 403 for anyone else.
    func delete(commentId: String, on post: KnownPost, by userId: String) async throws
}
