import Synchronization

/// Bounds the password hashes running at once: at most `concurrent` run, up to `waiting` more
/// wait their turn in order, and beyond that a caller is turned away at once (`Full`, which a
/// sign-in answers with 503 and `Retry-After`). A flood of sign-ins then costs the machine at
/// most `concurrent` cores, and every other service keeps the rest.
final class HashingQueue: Sendable {
    struct Full: Error {}

    private struct State {
        var running = 0
        var waiters: [CheckedContinuation<Bool, Never>] = []
    }

    let concurrent: Int
    let waiting: Int
    private let state = Mutex(State())

    init(concurrent: Int, waiting: Int) {
        self.concurrent = max(1, concurrent)
        self.waiting = max(0, waiting)
    }

    /// Runs `body` once a slot is free; throws `Full` when too many wait already.
    func run<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        try await acquire()
        defer { release() }
        return try await body()
    }

    private func acquire() async throws {
        enum Decision { case run, wait, refuse }
        let refused = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let decision = state.withLock { state -> Decision in
                if state.running < concurrent {
                    state.running += 1
                    return .run
                }
                guard state.waiters.count < waiting else { return .refuse }
                state.waiters.append(continuation)
                return .wait
            }
            switch decision {
            case .run: continuation.resume(returning: false)
            case .refuse: continuation.resume(returning: true)
            case .wait: break  // resumed by a `release()`
            }
        }
        if refused { throw Full() }
    }

    /// Hands the slot to the longest waiter, else frees it.
    private func release() {
        let next = state.withLock { state -> CheckedContinuation<Bool, Never>? in
            guard !state.waiters.isEmpty else {
                state.running -= 1
                return nil
            }
            return state.waiters.removeFirst()
        }
        next?.resume(returning: false)
    }
}
