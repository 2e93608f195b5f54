import Foundation
import Logging
import Metrics
import PostlyPostgres
import PostlyService
import ServiceLifecycle
import Synchronization

/// The open streams of this instance, and what reaches them: each notification stored by
/// any instance (`NOTIFY` on the service's database at commit, read back only when one of
/// its recipient's streams is open here), a heartbeat for all at once, and the end of a
/// revoked session's streams, of streams whose token expired (checked at each heartbeat), and
/// of a user's oldest stream when one more than allowed opens on any instance (`OpenStreams`).
final class NotificationHub: Service {
    private struct State {
        var byUser: [String: [String: StreamSubscription]] = [:]
        var count = 0
    }

    private let database: Database
    private let repository: any NotificationRepository
    private let openStreams: OpenStreams
    private let denyList: SessionDenyList
    private let heartbeatInterval: Duration
    private let streamCapacity: Int
    private let logger: Logger
    private let state = Mutex(State())
    private let openGauge = Gauge(label: "postly_notification_streams_open")
    private let dropped = Counter(label: "postly_notification_streams_dropped_total")
    private let listened = Atomic(false)

    struct NotListened: Error {}

    init(
        database: Database, repository: any NotificationRepository, openStreams: OpenStreams, denyList: SessionDenyList,
        heartbeatInterval: Duration, streamCapacity: Int, logger: Logger
    ) {
        self.database = database
        self.repository = repository
        self.openStreams = openStreams
        self.denyList = denyList
        self.heartbeatInterval = heartbeatInterval
        self.streamCapacity = streamCapacity
        self.logger = logger
        denyList.onRevocation { [weak self] in self?.endSession($0) }
    }

    // MARK: - Streams

    /// A stream of the user's notifications until `expiresAt`, counted among the user's
    /// streams on every instance before it answers: their oldest ends when this one is one
    /// too many, and a database that cannot count it answers 503 (the stream could carry
    /// nothing). `hold` it once its response is being written; `closeConnection` drops it for
    /// good. (One never held stops counting after three heartbeats.)
    func admit(
        userId: String, sessionId: String, expiresAt: Date, closeConnection: @escaping @Sendable () -> Void
    ) async throws -> StreamSubscription {
        let subscription = StreamSubscription(
            id: UUID().uuidString.lowercased(), userId: userId, sessionId: sessionId, expiresAt: expiresAt, capacity: streamCapacity,
            closeConnection: closeConnection)
        try await openStreams.open(id: subscription.id, userId: userId)
        return subscription
    }

    /// Hands the hub an admitted stream: from now on it gets its user's notifications.
    func hold(_ subscription: StreamSubscription) {
        let count = state.withLock { state in
            state.byUser[subscription.userId, default: [:]][subscription.id] = subscription
            state.count += 1
            return state.count
        }
        openGauge.record(count)
        // Revoked since it was admitted: the revocation closed the streams held here, which
        // did not hold this one yet.
        if denyList.isRevoked(subscription.sessionId) { subscription.drop() }
    }

    func unsubscribe(_ subscription: StreamSubscription) {
        let count = state.withLock { state -> Int in
            guard state.byUser[subscription.userId]?.removeValue(forKey: subscription.id) != nil else { return state.count }
            if state.byUser[subscription.userId]?.isEmpty == true { state.byUser[subscription.userId] = nil }
            state.count -= 1
            return state.count
        }
        subscription.end()
        openGauge.record(count)
        // Not waited for: a row left behind stops counting after three heartbeats.
        Task { [openStreams] in try? await openStreams.close(id: subscription.id) }
    }

    var streamCount: Int { state.withLock { $0.count } }

    /// Whether listening for stored notifications started once: streams opened before carry
    /// nothing until it does (and are then ended, to come back for what they missed), so the
    /// instance is not ready before. A connection lost later is not counted here: its streams
    /// end when it listens again, as they would on any instance.
    var hasListened: Bool { listened.load(ordering: .relaxed) }

    /// Closes the streams of a revoked session at once: a stream still writing its replay to a
    /// slow reader went on to its end, and ending the queue did not stop it.
    func endSession(_ sessionId: String) {
        for subscription in subscriptions(where: { $0.sessionId == sessionId }) { subscription.drop() }
    }

    /// Hands the notification to its recipient's streams here.
    func deliver(_ stored: StoredNotification) {
        for subscription in subscriptions(ofUser: stored.recipientId) {
            offer(.notification(stored), to: subscription)
        }
    }

    // MARK: - Running

    func run() async throws {
        await withDiscardingTaskGroup { group in
            group.addTask { await self.forwardSignals() }
            group.addTask { await self.closeWhenAsked() }
            group.addTask { await self.beat() }
            group.addTask { await self.refreshOpenStreams() }
            // Streams end on their own at graceful shutdown (the HTTP server's, which comes
            // first); this ends the hub's loops after it, or on cancellation.
            try? await gracefulShutdown()
            group.cancelAll()
        }
        for subscription in subscriptions(where: { _ in true }) { subscription.end() }
    }

    /// Streams a notification may have passed by end, so that their clients come back with
    /// `Last-Event-ID` and get what they missed: every stream here each time listening starts
    /// (after the connection was lost, or first, after it failed while streams opened: the
    /// signals sent meanwhile reached nobody), a recipient's streams when their notification
    /// cannot be read.
    private func forwardSignals() async {
        let signals = database.listen(channel: NotificationSignal.channel) { [self] in
            listened.store(true, ordering: .relaxed)
            let missed = subscriptions(where: { _ in true })
            if !missed.isEmpty { logger.info("listening; ending the open streams to catch up", metadata: ["streams": "\(missed.count)"]) }
            for subscription in missed { subscription.end() }
        }
        for await payload in signals {
            guard let signal = NotificationSignal(payload: payload), !subscriptions(ofUser: signal.recipientId).isEmpty else { continue }
            do {
                guard let stored = try await repository.notification(at: signal.position, recipientId: signal.recipientId) else { continue }
                deliver(stored)
            } catch {
                logger.warning("cannot read a new notification", metadata: ["position": "\(signal.position)", "error": "\(error)"])
                for subscription in subscriptions(ofUser: signal.recipientId) { subscription.end() }
            }
        }
    }

    /// Drops this instance's streams that another opening made one too many for their user.
    private func closeWhenAsked() async {
        for await id in database.listen(channel: OpenStreams.closingChannel) {
            for subscription in subscriptions(where: { $0.id == id }) { subscription.drop() }
        }
    }

    private func beat() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: heartbeatInterval)
            let now = Date()
            for subscription in subscriptions(where: { _ in true }) {
                if subscription.expiresAt <= now {
                    subscription.drop()
                } else {
                    offer(.heartbeat, to: subscription)
                }
            }
        }
    }

    /// Marks this instance's streams as open at each heartbeat, in a loop of its own: a slow
    /// database must not hold the heartbeats up. A stream whose row is gone no longer counts
    /// (ended as its user's surplus before it was held here, or purged as stale while the
    /// refreshes failed): it is closed, and its client comes back counted.
    private func refreshOpenStreams() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: heartbeatInterval)
            do {
                let gone = try await openStreams.refresh(ids: subscriptions(where: { _ in true }).map(\.id))
                for subscription in subscriptions(where: { gone.contains($0.id) }) { subscription.drop() }
            } catch {
                logger.warning("cannot mark this instance's streams as open", metadata: ["error": "\(error)"])
            }
        }
    }

    private func offer(_ item: StreamItem, to subscription: StreamSubscription) {
        if case .overflowed = subscription.offer(item) {
            dropped.increment()
            logger.info("dropped a stream that fell behind", metadata: ["userId": "\(subscription.userId)"])
        }
    }

    private func subscriptions(ofUser userId: String) -> [StreamSubscription] {
        state.withLock { state in state.byUser[userId].map { Array($0.values) } ?? [] }
    }

    private func subscriptions(where include: (StreamSubscription) -> Bool) -> [StreamSubscription] {
        state.withLock { state in state.byUser.values.flatMap { $0.values.filter(include) } }
    }
}
