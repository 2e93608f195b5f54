import Synchronization

/// Signals inside one process when a transaction commits: a transaction marks signals with
/// `DatabaseConnection.signalAfterCommit(_:payload:)`, and once it has committed (or may have:
/// the connection lost during COMMIT; never when it rolls back) every handler of their channels
/// runs, before the transaction call returns. So a cache dropped this way is never stale for the
/// writer's next request. Handlers wake or drop, which is harmless when nothing committed.
///
/// Why not `NOTIFY`: PostgreSQL holds one lock from a notifying transaction's pre-commit until
/// its commit record is flushed, so notifying write transactions commit one fsync at a time
/// instead of together. Other processes do not hear these signals: whoever must learn of their
/// commits looks for changes now and then as well.
final class CommitSignals: Sendable {
    struct Signal: Hashable, Sendable {
        var channel: String
        var payload: String
    }

    typealias Handler = @Sendable (_ payload: String) -> Void

    private struct Handlers {
        var byChannel: [String: [UInt64: Handler]] = [:]
        var nextID: UInt64 = 0
    }

    private let handlers = Mutex(Handlers())

    func subscribe(channel: String, _ handler: @escaping Handler) -> UInt64 {
        handlers.withLock { handlers in
            handlers.nextID += 1
            handlers.byChannel[channel, default: [:]][handlers.nextID] = handler
            return handlers.nextID
        }
    }

    func unsubscribe(channel: String, id: UInt64) {
        handlers.withLock { _ = $0.byChannel[channel]?.removeValue(forKey: id) }
    }

    /// Runs the handlers outside the lock.
    func deliver(_ signals: Set<Signal>) {
        guard !signals.isEmpty else { return }
        let calls = handlers.withLock { handlers in
            signals.flatMap { signal in (handlers.byChannel[signal.channel]?.values).map { $0.map { ($0, signal.payload) } } ?? [] }
        }
        for (handler, payload) in calls { handler(payload) }
    }
}

/// A handler of `Database.onCommit(signalling:_:)`; `cancel()` removes it.
public struct CommitSubscription: Sendable {
    let signals: CommitSignals
    let channel: String
    let id: UInt64

    public func cancel() {
        signals.unsubscribe(channel: channel, id: id)
    }
}

extension Database {
    /// Calls `handler` with the payload of each `signalAfterCommit(channel, payload:)` of this
    /// process, right after its transaction committed.
    public func onCommit(signalling channel: String, _ handler: @escaping @Sendable (_ payload: String) -> Void) -> CommitSubscription {
        CommitSubscription(signals: commitSignals, channel: channel, id: commitSignals.subscribe(channel: channel, handler))
    }
}
