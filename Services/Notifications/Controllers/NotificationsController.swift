import Foundation
import Hummingbird
import PostlyModels
import PostlyService

/// `GET /api/notifications`, `POST /api/notifications/read`, `POST /api/notifications/stream-ticket`.
struct NotificationsController: Sendable {
    let repository: any NotificationRepository
    let ticketLifetime: Duration

    /// The most ids one `read` request may name.
    static let maxIds = 100

    func addRoutes(to router: Router<PostlyRequestContext>) {
        let notifications = router.authenticated("api/notifications")
        notifications.get(use: list)
        notifications.post("read", use: markRead)
        notifications.post("stream-ticket", use: streamTicket)
    }

    @Sendable func list(_ request: Request, context: AuthenticatedRequestContext) async throws -> NotificationPage {
        let identity = context.identity
        let page = try request.pageRequest()
        let unreadOnly = try Self.unreadOnly(request.uri.queryParameters)
        let result = try await repository.page(recipientId: identity.userId, page: page, unreadOnly: unreadOnly)
        return NotificationPage(
            notifications: result.notifications, pagination: Pagination(total: result.total, page: page.page, limit: page.limit),
            unreadCount: result.unreadCount)
    }

    struct ReadRequest: Decodable {
        var ids: [String]?
        var all: Bool?
    }

    @Sendable func markRead(_ request: Request, context: AuthenticatedRequestContext) async throws -> Message {
        let identity = context.identity
        let body = try await request.decodeJSON(as: ReadRequest.self, context: context)
        let count: Int
        switch (body.ids, body.all ?? false) {
        case (.some, true):
            throw APIError.invalidFields(["ids": "give either ids or all, not both"])
        case (.some(let ids), false):
            guard (1...Self.maxIds).contains(ids.count) else {
                throw APIError.invalidFields(["ids": "must hold 1 to \(Self.maxIds) ids"])
            }
            count = try await repository.markRead(ids: ids, recipientId: identity.userId)
        case (nil, true):
            count = try await repository.markAllRead(recipientId: identity.userId)
        case (nil, false):
            throw APIError.invalidFields(["ids": "give ids, or all: true"])
        }
        return Message(count == 1 ? "1 notification marked as read" : "\(count) notifications marked as read")
    }

    struct StreamTicket: ResponseEncodable {
        var ticket: String
    }

    /// A single-use ticket that opens the caller's stream without an `Authorization` header
    /// (browsers' `EventSource` cannot send one).
    @Sendable func streamTicket(_ request: Request, context: AuthenticatedRequestContext) async throws -> StreamTicket {
        let identity = context.identity
        // 256 bits from the system's secure generator, as hex: safe in a URL as it is.
        let ticket = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: .min ... .max)) }.joined()
        try await repository.storeTicket(
            ticket, for: TicketHolder(userId: identity.userId, sessionId: identity.sessionId, expiresAt: identity.expiresAt),
            lifetime: ticketLifetime)
        return StreamTicket(ticket: ticket)
    }

    /// `unread`: `true` lists only unread notifications; absent or `false`, all of them.
    static func unreadOnly(_ query: Parameters) throws -> Bool {
        switch query.get("unread") {
        case nil, "false": return false
        case "true": return true
        default: throw APIError.badRequest("'unread' must be true or false")
        }
    }
}
