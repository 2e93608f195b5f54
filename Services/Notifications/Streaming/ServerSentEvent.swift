import Foundation
import NIOCore
import PostlyModels

/// The text of Server-Sent Events as the stream writes them.
enum ServerSentEvent {
    /// Opens the stream: how long a client should wait before reconnecting, the id it should
    /// come back with until a notification arrives (an event without data sets a client's last
    /// event id and is not dispatched), and a first line so the client sees the stream is live.
    /// The id is one the server chose (a stored notification's, or the marker), never a client's text.
    static func opening(retry: Duration, lastEventId: String) -> ByteBuffer {
        ByteBuffer(string: "retry: \(retry.components.seconds * 1000)\nid: \(lastEventId)\n: connected\n\n")
    }

    static let heartbeat = ByteBuffer(string: ": keep-alive\n\n")

    /// `event: notification`, `id: <_id>`, `data: <the JSON object on one line>`.
    static func notification(_ notification: Notification) throws -> ByteBuffer {
        let json = String(decoding: try PostlyJSON.encode(notification), as: UTF8.self)
        return ByteBuffer(string: "event: notification\nid: \(notification.id)\ndata: \(json)\n\n")
    }
}
