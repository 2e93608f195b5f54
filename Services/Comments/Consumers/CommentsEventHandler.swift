import PostlyEvents
import PostlyModels
import PostlyPostgres

/// Applies `postly.posts` and `postly.users` events to the projection: a post's author,
/// title, status and deletion (a deleted post's comments go with it), and users' names
/// and pictures on their comments. Likes change nothing here.
struct CommentsEventHandler: EventHandler {
    func apply(_ event: Event, in connection: DatabaseConnection) async throws {
        switch event.data {
        case .postCreated(let post), .postUpdated(let post):
            _ = try await PostgresCommentRepository.applyPost(post, deleted: false, sequence: event.sequence, in: connection)
        case .postDeleted(let post):
            _ = try await PostgresCommentRepository.applyPostDeletion(post, sequence: event.sequence, actorId: event.actorId, in: connection)
        case .userRegistered(let user), .userUpdated(let user):
            try await PostgresCommentRepository.applyUser(user, in: connection)
        case .postLiked, .postUnliked, .sessionRevoked, .commentCreated, .commentDeleted:
            break
        }
    }
}
