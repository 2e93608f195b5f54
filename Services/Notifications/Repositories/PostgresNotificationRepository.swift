import Foundation
import PostlyModels
import PostlyPostgres
import PostlyService

/// `NotificationRepository` on the service's PostgreSQL database. Actors are shown as the
/// users projection knows them now, else as the event that created the notification named them.
struct PostgresNotificationRepository: NotificationRepository {
    let database: Database

    func page(recipientId: String, page: PageRequest, unreadOnly: Bool) async throws -> (notifications: [Notification], total: Int, unreadCount: Int) {
        let unreadFilter = unreadOnly ? "AND n.read_at IS NULL" : ""
        let rows = try await database.query(
            """
            SELECT \(unescaped: Self.columns) \(unescaped: Self.from)
            WHERE n.recipient_id = \(recipientId) AND NOT n.removed \(unescaped: unreadFilter)
            ORDER BY n.created_at DESC, n.position DESC
            LIMIT \(page.limit) OFFSET \(page.offset)
            """)
        let counts = try await database.query("SELECT total, unread FROM notification_counts WHERE recipient_id = \(recipientId)").first
        let unread = try counts?.decode("unread", as: Int.self) ?? 0
        return (
            try rows.map { try Self.stored($0).notification },
            unreadOnly ? unread : try counts?.decode("total", as: Int.self) ?? 0,
            unread
        )
    }

    // The writes below run in retried transactions: marking read can deadlock with the
    // consumer's removals, and a ticket's DELETE must not be lost with its connection.

    func markRead(ids: [String], recipientId: String) async throws -> Int {
        try await database.retryingTransaction { connection in
            try await connection.execute(
                """
                UPDATE notifications SET read_at = now()
                WHERE id = ANY(\(ids)) AND recipient_id = \(recipientId) AND read_at IS NULL AND NOT removed
                """)
        }
    }

    func markAllRead(recipientId: String) async throws -> Int {
        try await database.retryingTransaction { connection in
            try await connection.execute(
                "UPDATE notifications SET read_at = now() WHERE recipient_id = \(recipientId) AND read_at IS NULL AND NOT removed")
        }
    }

    func notification(at position: Int64, recipientId: String) async throws -> StoredNotification? {
        let rows = try await database.query(
            """
            SELECT \(unescaped: Self.columns) \(unescaped: Self.from)
            WHERE n.position = \(position) AND n.recipient_id = \(recipientId) AND NOT n.removed
            """)
        return try rows.first.map(Self.stored)
    }

    func position(of id: String, recipientId: String) async throws -> Int64? {
        try await database.query("SELECT position FROM notifications WHERE id = \(id) AND recipient_id = \(recipientId)")
            .first?.decode("position", as: Int64.self)
    }

    func newest(recipientId: String) async throws -> (id: String, position: Int64)? {
        let rows = try await database.query(
            "SELECT id, position FROM notifications WHERE recipient_id = \(recipientId) AND NOT removed ORDER BY position DESC LIMIT 1")
        return try rows.first.map { (try $0.decode("id", as: String.self), try $0.decode("position", as: Int64.self)) }
    }

    func notifications(recipientId: String, after position: Int64, limit: Int) async throws -> [StoredNotification] {
        try await database.query(
            """
            SELECT \(unescaped: Self.columns) \(unescaped: Self.from)
            WHERE n.recipient_id = \(recipientId) AND n.position > \(position) AND NOT n.removed
            ORDER BY n.position LIMIT \(limit)
            """
        ).map(Self.stored)
    }

    func storeTicket(_ ticket: String, for holder: TicketHolder, lifetime: Duration) async throws {
        let seconds = Double(lifetime.components.seconds) + Double(lifetime.components.attoseconds) / 1e18
        try await database.retryingTransaction { connection in
            // Spent or not, an expired ticket is of no use to anyone.
            try await connection.execute("DELETE FROM stream_tickets WHERE expires_at < now()")
            try await connection.execute(
                """
                INSERT INTO stream_tickets (hash, user_id, session_id, expires_at, access_expires_at)
                VALUES (sha256(\(Array(ticket.utf8))), \(holder.userId), \(holder.sessionId),
                        now() + make_interval(secs => \(seconds)), \(holder.expiresAt))
                """)
        }
    }

    func redeemTicket(_ ticket: String) async throws -> TicketHolder? {
        let rows = try await database.retryingTransaction { connection in
            try await connection.query(
                """
                DELETE FROM stream_tickets WHERE hash = sha256(\(Array(ticket.utf8)))
                RETURNING user_id, session_id, COALESCE(access_expires_at, expires_at) AS access_expires_at,
                    expires_at > now() AND COALESCE(access_expires_at, expires_at) > now() AS valid
                """)
        }
        guard let row = rows.first, try row.decode("valid", as: Bool.self) else { return nil }
        return TicketHolder(
            userId: try row.decode("user_id"), sessionId: try row.decode("session_id"), expiresAt: try row.decode("access_expires_at"))
    }

    // MARK: - Rows

    static let columns = """
        n.position, n.id, n.recipient_id, n.type, n.actor_id, n.post_id, n.post_title, n.comment_id, n.created_at, n.read_at,
        COALESCE(u.name, n.actor_name) AS actor_name,
        CASE WHEN u.user_id IS NULL THEN n.actor_picture ELSE u.profile_picture END AS actor_picture
        """
    static let from = "FROM notifications n LEFT JOIN users u ON u.user_id = n.actor_id"

    static func stored(_ row: Row) throws -> StoredNotification {
        StoredNotification(
            position: try row.decode("position", as: Int64.self),
            recipientId: try row.decode("recipient_id", as: String.self),
            notification: Notification(
                id: try row.decode("id", as: String.self),
                type: try row.decode("type", as: NotificationType.self),
                actor: Author(
                    userId: try row.decode("actor_id", as: String.self), name: try row.decode("actor_name", as: String.self),
                    profilePicture: try row.decode("actor_picture", as: String?.self)),
                postId: try row.decode("post_id", as: String.self),
                postTitle: try row.decode("post_title", as: String.self),
                commentId: try row.decode("comment_id", as: String?.self),
                createdAt: try row.decode("created_at", as: Date.self),
                readAt: try row.decode("read_at", as: Date?.self)))
    }
}

extension NotificationType: PostgresDecodable {}
