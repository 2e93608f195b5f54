import Foundation
import PostlyEvents
import PostlyModels
import PostlyPostgres

/// Turns post and comment events into notifications of the post's author, and keeps
/// actors' names and pictures current from user events; imported events (`Event.imported`)
/// notify nobody. The runner applies each event
/// once, in order per key; what is left here is what the topics do not order among
/// themselves (a like or comment arriving after its post's deletion).
struct NotificationsEventHandler: EventHandler {
    func apply(_ event: Event, in connection: DatabaseConnection) async throws {
        switch event.data {
        case .postLiked(let like):
            try await Self.notify(
                NewNotification(
                    recipientId: like.postAuthorId, type: .postLiked, actor: like.liker, postId: like.postId,
                    postTitle: like.postTitle, commentId: nil, createdAt: event.occurredAt),
                in: connection)
        case .commentCreated where event.imported:
            // A comment an import brought in happened long ago: a storm of notifications of it
            // would tell nobody anything new.
            break
        case .commentCreated(let snapshot):
            try await Self.notify(
                NewNotification(
                    recipientId: snapshot.postAuthorId, type: .commentCreated, actor: snapshot.comment.author,
                    postId: snapshot.comment.postId, postTitle: snapshot.postTitle, commentId: snapshot.comment.id,
                    createdAt: snapshot.comment.createdAt),
                in: connection)
        case .commentDeleted(let snapshot):
            // The lock first, as every write of the consumer takes it: the counts' row that the
            // trigger locks comes after it, so two consumers never wait for each other in a cycle.
            try await Self.lockNotifications(in: connection)
            try await connection.execute("UPDATE notifications SET removed = true WHERE comment_id = \(snapshot.comment.id)")
        case .postDeleted(let snapshot):
            try await Self.removePost(snapshot.post.id, in: connection)
        case .userRegistered, .userUpdated:
            try await UsersProjection.apply(event, in: connection)
        case .postUnliked, .postCreated, .postUpdated, .sessionRevoked:
            // An unlike keeps the notification: like, unlike, like again notifies once.
            break
        }
    }

    struct NewNotification {
        var recipientId: String
        var type: NotificationType
        var actor: Author
        var postId: String
        var postTitle: String
        var commentId: String?
        var createdAt: Date
    }

    /// Stores the notification unless it is the author's own action, its post is deleted, or
    /// it exists already (a like again), and wakes every instance's streams at commit.
    static func notify(_ new: NewNotification, in connection: DatabaseConnection) async throws {
        guard new.actor.userId != new.recipientId else { return }
        // Held until commit: positions become visible in order, and a post's deletion
        // cannot slip between the check below and the insert.
        try await lockNotifications(in: connection)
        let deleted = try await connection.query("SELECT 1 FROM deleted_posts WHERE post_id = \(new.postId)")
        guard deleted.isEmpty else { return }
        let inserted = try await connection.query(
            """
            INSERT INTO notifications
                (id, recipient_id, type, actor_id, actor_name, actor_picture, post_id, post_title, comment_id, created_at)
            VALUES (\(UUID.timeOrderedString()), \(new.recipientId), \(new.type.rawValue), \(new.actor.userId),
                    \(new.actor.name), \(new.actor.profilePicture), \(new.postId), \(new.postTitle), \(new.commentId),
                    \(new.createdAt))
            ON CONFLICT DO NOTHING
            RETURNING position
            """)
        guard let row = inserted.first else { return }
        let signal = NotificationSignal(position: try row.decode("position", as: Int64.self), recipientId: new.recipientId)
        try await connection.execute("SELECT pg_notify(\(NotificationSignal.channel), \(signal.payload))")
    }

    /// Removes the post's notifications and remembers the post, so late events of it notify nobody.
    static func removePost(_ postId: String, in connection: DatabaseConnection) async throws {
        try await lockNotifications(in: connection)
        try await connection.execute("INSERT INTO deleted_posts (post_id) VALUES (\(postId)) ON CONFLICT DO NOTHING")
        try await connection.execute("UPDATE notifications SET removed = true WHERE post_id = \(postId) AND NOT removed")
    }

    static func lockNotifications(in connection: DatabaseConnection) async throws {
        try await connection.execute("SELECT pg_advisory_xact_lock(\(lockKey))")
    }

    /// The advisory lock that orders notification inserts (any constant this database does not use otherwise).
    static let lockKey: Int64 = 0x6E6F_7469_6669_6573
}
