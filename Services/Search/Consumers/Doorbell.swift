import Synchronization

/// Wakes a loop that waits for work sooner than its next look: `ring()` from anywhere, and
/// `wait(upTo:)` returns at the first ring (or one rung since the last wait) or after the time.
final class Doorbell: Sendable {
    private struct State {
        var rung = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = Mutex(State())

    func ring() {
        let waiter = state.withLock { state in
            guard let waiter = state.waiter else {
                state.rung = true
                return nil as CheckedContinuation<Void, Never>?
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }

    /// Returns at a ring, after `timeout`, or when the task is cancelled.
    func wait(upTo timeout: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await Task.sleep(for: timeout) }
            group.addTask { await self.waitForRing() }
            await group.next()
            group.cancelAll()
        }
    }

    private func waitForRing() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state in
                    // Cancellation is flagged before onCancel runs, so one of the two sees it.
                    if state.rung || Task.isCancelled {
                        state.rung = false
                        return true
                    }
                    state.waiter = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { state in
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume()
        }
    }
}
