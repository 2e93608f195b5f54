import HTTPTypes
import Hummingbird
import Metrics
import NIOCore
import PostlyModels
import PostlyService
import ServiceLifecycle

/// `GET /api/notifications/stream`: the caller's new notifications as Server-Sent Events.
///
/// The caller is checked when the stream opens (a token, or a ticket for `EventSource`).
/// A reconnect with `Last-Event-ID` (or `?lastEventId=`, for a new `EventSource`) is first
/// replayed what came after that notification. A stream opened without one starts after the
/// caller's newest notification and says so in its first event's id, so a client that comes
/// back before any notification arrived is replayed what it missed. The stream then follows
/// the hub; it ends when its session is revoked or its token expires, at graceful shutdown,
/// when the client leaves, when the client falls too far behind, or when the user opens one
/// stream too many (the oldest ends).
struct NotificationStreamController: Sendable {
    let repository: any NotificationRepository
    let hub: NotificationHub
    let denyList: SessionDenyList

    /// Replayed notifications are read this many at a time.
    static let replayBatch = 100
    /// What a client should wait before reconnecting.
    static let retry = Duration.seconds(3)

    private let opened = Counter(label: "postly_notification_streams_opened_total")
    private let pushed = Counter(label: "postly_notifications_pushed_total")
    private let replayed = Counter(label: "postly_notifications_replayed_total")

    init(repository: any NotificationRepository, hub: NotificationHub, denyList: SessionDenyList) {
        self.repository = repository
        self.hub = hub
        self.denyList = denyList
    }

    func addRoutes(to router: Router<PostlyRequestContext>) {
        router.get("api/notifications/stream", use: stream)
    }

    @Sendable func stream(_ request: Request, context: PostlyRequestContext) async throws -> Response {
        let caller = try await caller(request, context: context)
        // Read and counted before answering: a database that is down answers 503, not a stream
        // that can carry nothing.
        let anchor = try await anchor(
            lastEventId: request.headers[.lastEventID] ?? request.uri.queryParameters.get("lastEventId"), recipientId: caller.userId)
        let channel = context.channel
        let subscription = try await hub.admit(userId: caller.userId, sessionId: caller.sessionId, expiresAt: caller.expiresAt) {
            channel.close(promise: nil)
        }
        opened.increment()
        return Response(
            status: .ok,
            headers: [.contentType: "text/event-stream", .cacheControl: "no-cache", .accelBuffering: "no"],
            body: ResponseBody { writer in
                hub.hold(subscription)
                defer { hub.unsubscribe(subscription) }
                let watcher = ConnectionCloseWatcher { subscription.drop() }
                try await channel.pipeline.addHandler(watcher, position: .first).get()
                defer { channel.pipeline.removeHandler(watcher, promise: nil) }
                try await withGracefulShutdownHandler {
                    try await send(subscription, after: anchor, to: &writer)
                } onGracefulShutdown: {
                    subscription.end()
                }
                try await writer.finish(nil)
            })
    }

    /// Where a stream starts: after the caller's notification the client names, else after the
    /// caller's newest one (an unknown id, or another user's, replays only what is stored while
    /// the stream opens).
    private func anchor(lastEventId: String?, recipientId: String) async throws -> StreamAnchor {
        let beforeAny = StreamAnchor.beforeAny(of: recipientId)
        if lastEventId == beforeAny.eventId { return beforeAny }
        if let lastEventId, let position = try await repository.position(of: lastEventId, recipientId: recipientId) {
            return StreamAnchor(eventId: lastEventId, position: position)
        }
        return try await repository.newest(recipientId: recipientId).map { StreamAnchor(eventId: $0.id, position: $0.position) } ?? beforeAny
    }

    /// Writes the replay, then what the hub hands over, each notification once: positions
    /// grow in commit order, so anything at or below the last one written was written. The
    /// replay also covers what was stored between reading the anchor and the hub's hold.
    private func send(_ subscription: StreamSubscription, after anchor: StreamAnchor, to writer: inout any ResponseBodyWriter) async throws {
        try await writer.write(ServerSentEvent.opening(retry: Self.retry, lastEventId: anchor.eventId))
        var last = anchor.position
        while true {
            let batch = try await repository.notifications(recipientId: subscription.userId, after: last, limit: Self.replayBatch)
            for stored in batch {
                try await writer.write(try ServerSentEvent.notification(stored.notification))
                last = stored.position
            }
            replayed.increment(by: batch.count)
            if batch.count < Self.replayBatch { break }
        }
        for await item in subscription.items {
            switch item {
            case .heartbeat:
                try await writer.write(ServerSentEvent.heartbeat)
            case .notification(let stored):
                guard stored.position > last else { continue }
                try await writer.write(try ServerSentEvent.notification(stored.notification))
                last = stored.position
                pushed.increment()
            }
        }
    }

    /// Whose stream this is: the token's holder, else a ticket's (spent by this use).
    private func caller(_ request: Request, context: PostlyRequestContext) async throws -> TicketHolder {
        if let identity = context.identity {
            return TicketHolder(userId: identity.userId, sessionId: identity.sessionId, expiresAt: identity.expiresAt)
        }
        guard let ticket = request.uri.queryParameters.get("ticket") else {
            throw context.tokenRefusal ?? APIError.unauthorized("Authentication required: a Bearer token or a stream ticket")
        }
        guard let holder = try await repository.redeemTicket(ticket), !denyList.isRevoked(holder.sessionId) else {
            throw APIError.unauthorized("The stream ticket is invalid, spent or expired")
        }
        return holder
    }
}

/// The notification a stream starts after, as the id a client comes back with.
struct StreamAnchor: Sendable {
    var eventId: String
    var position: Int64

    /// Before the user's first notification: a stream opened when they had none. It names the
    /// user, so that a client coming back with it for another account is not replayed that
    /// account's whole history.
    static func beforeAny(of userId: String) -> StreamAnchor {
        StreamAnchor(eventId: "start:\(userId)", position: 0)
    }
}

extension HTTPField.Name {
    static let lastEventID = Self("Last-Event-ID")!
    static let accelBuffering = Self("X-Accel-Buffering")!
}
