import PostlyEvents
import PostlyModels
import PostlyPostgres

/// Keeps the posts service's projections: authors' names and pictures from user events (the
/// shared `UsersProjection`), and the comments shown in posts from comment events, each
/// recorded in the change feed's log (`ChangeLog`). The runner has already dropped stale and
/// repeated events.
///
/// A comment event touches the `comments` rows only, never the post's row: a post's
/// `commentsCount` is counted from them when the post is read. (A counter on the post's row
/// made this consumer and a post's deletion lock the post and its comments in opposite
/// orders, and deadlock.)
public struct ProjectionHandler: EventHandler {
    public init() {}

    public func apply(_ event: Event, in connection: DatabaseConnection) async throws {
        switch event.data {
        case .userRegistered(let user):
            try await UsersProjection.apply(event, in: connection)
            // Their name and picture show in the posts they already wrote: rarely any yet (every
            // sign-up dropped every instance's whole read model). A comment needs an account,
            // so none of theirs is shown yet; a rename drops everything.
            let written = try await connection.query("SELECT id FROM posts WHERE author_id = \(user.userId)")
            connection.signal(try written.map { .post(id: try $0.decode("id")) })
        case .userUpdated(let user):
            try await UsersProjection.apply(event, in: connection)
            try await ChangeLog.author(user.userId, in: connection)
            // A name or picture shows in every post of the author and in comments anywhere.
            connection.signal([.everything])
        case .commentCreated(let snapshot):
            let comment = snapshot.comment
            try await connection.execute(
                """
                INSERT INTO comments (id, post_id, content, author_id, author_name, author_picture, created_at)
                VALUES (\(comment.id), \(comment.postId), \(comment.content), \(comment.author.userId), \(comment.author.name),
                        \(comment.author.profilePicture), \(comment.createdAt))
                ON CONFLICT (id) DO NOTHING
                """)
            try await ChangeLog.comment(comment.id, postId: comment.postId, authorId: comment.author.userId, deleted: false, in: connection)
            connection.signal([.counts(id: comment.postId)])
        case .commentDeleted(let snapshot):
            try await connection.execute("DELETE FROM comments WHERE id = \(snapshot.comment.id)")
            try await ChangeLog.comment(
                snapshot.comment.id, postId: snapshot.comment.postId, authorId: snapshot.comment.author.userId, deleted: true, in: connection)
            connection.signal([.counts(id: snapshot.comment.postId)])
        default:
            break
        }
    }
}
