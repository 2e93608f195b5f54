import PostlyEvents
import PostlyModels
import PostlyPostgres

/// Keeps the posts service's projections: authors' names and pictures from user events,
/// the comments shown in posts (and their count) from comment events. The runner has
/// already dropped stale and repeated events.
public struct ProjectionHandler: EventHandler {
    public init() {}

    public func apply(_ event: Event, in connection: DatabaseConnection) async throws {
        switch event.data {
        case .userRegistered(let user), .userUpdated(let user):
            try await connection.execute(
                """
                INSERT INTO users (user_id, name, profile_picture) VALUES (\(user.userId), \(user.name), \(user.profilePicture))
                ON CONFLICT (user_id) DO UPDATE SET name = EXCLUDED.name, profile_picture = EXCLUDED.profile_picture
                """)
        case .commentCreated(let snapshot):
            let comment = snapshot.comment
            let inserted = try await connection.execute(
                """
                INSERT INTO comments (id, post_id, content, author_id, author_name, author_picture, created_at)
                VALUES (\(comment.id), \(comment.postId), \(comment.content), \(comment.author.userId), \(comment.author.name),
                        \(comment.author.profilePicture), \(comment.createdAt))
                ON CONFLICT (id) DO NOTHING
                """)
            if inserted > 0 {
                try await connection.execute("UPDATE posts SET comments_count = comments_count + 1 WHERE id = \(comment.postId)")
            }
        case .commentDeleted(let snapshot):
            let deleted = try await connection.execute("DELETE FROM comments WHERE id = \(snapshot.comment.id)")
            if deleted > 0 {
                try await connection.execute(
                    "UPDATE posts SET comments_count = greatest(comments_count - 1, 0) WHERE id = \(snapshot.comment.postId)")
            }
        default:
            break
        }
    }
}
