import PostlyEvents
import PostlyModels

/// What the comments service refuses, in the domain's words; the controllers map them to
/// problem documents.
enum CommentError: Error, Sendable, Hashable {
    /// No such post, or deleted, or another user's draft: all look alike.
    case postNotFound
    /// No such comment on that post.
    case commentNotFound
    /// Only the comment's author or the post's author may delete a comment.
    case notAllowedToDelete
}

/// The comments service's storage: comments and the projection of posts and users. Reads
/// take the database; every write runs inside the service's write unit (`WriteTransaction`),
/// which adds the events it emits to the outbox with the change.
protocol CommentRepository: Sendable {
    /// The projection's knowledge of a post, deleted ones included; nil when it has none.
    func post(id: String) async throws -> KnownPost?
    /// Oldest first; every comment when `page` is nil.
    func comments(postId: String, page: PageRequest?) async throws -> [Comment]
    /// The user's picture, when a user event told it.
    func profilePicture(userId: String) async throws -> String?
    /// Stores a new comment with its `comment.created` event, timed once it holds the post's
    /// lock, so that comments list in the order they commit. Throws `postNotFound` when the
    /// post was deleted meanwhile.
    func create(content: String, by author: Author, on post: KnownPost, in transaction: WriteTransaction) async throws -> Comment
    /// Deletes the comment of `post` with its `comment.deleted` event when `userId` wrote the
    /// comment or the post; `commentNotFound` for a comment not on that post,
    /// `notAllowedToDelete` for anyone else.
    func delete(commentId: String, on post: KnownPost, by userId: String, in transaction: WriteTransaction) async throws
    /// Stores an earlier deployment's comment with an imported `comment.created`, unless one with
    /// its id exists; rejected when the post was deleted.
    func importComment(_ comment: Comment, on post: KnownPost, in transaction: WriteTransaction) async throws -> ImportResult
}
