import PostlyPostgres
import Synchronization

/// Rings when this instance commits a change that matters to a waiter (the scheduler's next
/// tick, a change feed's long poll); each waits at most a given time, since another
/// instance's commits never ring it.
final class CommitBell: Sendable {
    private struct State {
        var rings: UInt64 = 0
        var nextWaiter: UInt64 = 0
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
    }

    private let state = Mutex(State())

    /// Rings after each commit that signals a payload `matches` accepts on `channel`.
    init(database: Database, channel: String, matching matches: @escaping @Sendable (String) -> Bool) {
        // For the database's lifetime, like the bell's.
        _ = database.onCommit(signalling: channel) { [self] payload in
            if matches(payload) { ring() }
        }
    }

    /// How often it has rung: a waiter reads it before it looks at the database, and waits
    /// for a ring after it, so a commit in between is not missed.
    var rings: UInt64 { state.withLock { $0.rings } }

    func ring() {
        let waiters = state.withLock { state in
            state.rings += 1
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once it rang after `seen` (at once if it has), after `timeout`, or when the task
    /// is cancelled.
    func wait(after seen: UInt64, atMost timeout: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await Task.sleep(for: timeout) }
            group.addTask { await self.ringing(after: seen) }
            await group.next()
            group.cancelAll()
        }
    }

    private func ringing(after seen: UInt64) async {
        let id = state.withLock { state in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state in
                    guard state.rings == seen, !Task.isCancelled else { return true }
                    state.waiters[id] = waiter
                    return false
                }
                if now { waiter.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }
}
