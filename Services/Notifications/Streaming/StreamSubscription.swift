import Foundation

/// What the hub hands to one open stream.
enum StreamItem: Sendable {
    case notification(StoredNotification)
    /// Time for a comment line, so proxies and clients see the connection alive.
    case heartbeat
}

/// One open stream's queue of items, bounded: a reader that falls `capacity` items behind
/// is dropped (its connection closed) rather than buffered for; it reconnects with
/// `Last-Event-ID` and is replayed what it missed.
final class StreamSubscription: Sendable {
    /// Unique across instances (`OpenStreams`).
    let id: String
    let userId: String
    let sessionId: String
    /// When the caller's access token expires: the stream ends then.
    let expiresAt: Date
    let items: AsyncStream<StreamItem>
    private let continuation: AsyncStream<StreamItem>.Continuation
    private let closeConnection: @Sendable () -> Void

    init(id: String, userId: String, sessionId: String, expiresAt: Date, capacity: Int, closeConnection: @escaping @Sendable () -> Void) {
        self.id = id
        self.userId = userId
        self.sessionId = sessionId
        self.expiresAt = expiresAt
        self.closeConnection = closeConnection
        let (items, continuation) = AsyncStream.makeStream(of: StreamItem.self, bufferingPolicy: .bufferingOldest(capacity))
        self.items = items
        self.continuation = continuation
    }

    enum Offer {
        case queued
        /// The reader was too far behind and is being dropped.
        case overflowed
        case ended
    }

    func offer(_ item: StreamItem) -> Offer {
        switch continuation.yield(item) {
        case .enqueued: return .queued
        case .terminated: return .ended
        case .dropped:
            drop()
            return .overflowed
        @unknown default: return .ended
        }
    }

    /// Ends the stream after what is queued (revocation, shutdown, the client went away).
    func end() {
        continuation.finish()
    }

    /// Ends the stream now, closing its connection: pending writes fail instead of waiting
    /// for a reader that does not read.
    func drop() {
        continuation.finish()
        closeConnection()
    }
}
