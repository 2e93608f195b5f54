import Foundation
import PostlyModels
import PostlyService

/// The contract's notification (Foundation has a `Notification` of its own).
typealias Notification = PostlyModels.Notification

/// A notification with where it stands among all notifications (commit order) and whom it is for.
struct StoredNotification: Sendable, Hashable {
    var position: Int64
    var recipientId: String
    var notification: Notification
}

/// Who a spent stream ticket was issued to, and when the token that asked for it expires.
struct TicketHolder: Sendable, Hashable {
    var userId: String
    var sessionId: String
    var expiresAt: Date
}

/// The notifications of users, their read state, and stream tickets.
protocol NotificationRepository: Sendable {
    /// The recipient's notifications, newest first, with the total of those asked for and of unread ones.
    func page(recipientId: String, page: PageRequest, unreadOnly: Bool) async throws -> (notifications: [Notification], total: Int, unreadCount: Int)
    /// Marks those of `ids` that are the recipient's and unread as read; returns how many.
    func markRead(ids: [String], recipientId: String) async throws -> Int
    /// Marks every unread notification of the recipient as read; returns how many.
    func markAllRead(recipientId: String) async throws -> Int
    /// The notification at `position` if it is the recipient's and not removed.
    func notification(at position: Int64, recipientId: String) async throws -> StoredNotification?
    /// The position of the recipient's notification `id` (removed ones too), if it is theirs.
    func position(of id: String, recipientId: String) async throws -> Int64?
    /// The id and position of the recipient's newest notification (not removed), if any.
    func newest(recipientId: String) async throws -> (id: String, position: Int64)?
    /// The recipient's notifications after `position`, in position order.
    func notifications(recipientId: String, after position: Int64, limit: Int) async throws -> [StoredNotification]
    /// Stores a ticket (as its SHA-256) for the holder, valid for `lifetime`.
    func storeTicket(_ ticket: String, for holder: TicketHolder, lifetime: Duration) async throws
    /// Spends the ticket: its holder if it exists and neither it nor the token that asked for it
    /// has expired; it cannot be used again either way.
    func redeemTicket(_ ticket: String) async throws -> TicketHolder?
}
