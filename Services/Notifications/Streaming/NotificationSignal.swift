/// What `NOTIFY` says when a notification is stored: its position and recipient, so an
/// instance without a stream of that recipient does not even read it.
struct NotificationSignal: Sendable, Hashable {
    static let channel = "postly_notifications"

    var position: Int64
    var recipientId: String

    var payload: String { "\(position) \(recipientId)" }

    init(position: Int64, recipientId: String) {
        self.position = position
        self.recipientId = recipientId
    }

    init?(payload: String) {
        guard let space = payload.firstIndex(of: " "), let position = Int64(payload[..<space]) else { return nil }
        self.init(position: position, recipientId: String(payload[payload.index(after: space)...]))
    }
}
