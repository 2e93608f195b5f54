import ServiceLifecycle
import Synchronization

/// Opens once, when a service's start-up work is done. What uses the service's tables waits
/// for it.
final class StartupGate: Sendable {
    private struct State {
        var isOpen = false
        var waiters: [Int: CheckedContinuation<Void, any Error>] = [:]
        var nextWaiter = 0
    }

    private let state = Mutex(State())

    func open() {
        let waiters = state.withLock { state in
            state.isOpen = true
            defer { state.waiters = [:] }
            return state.waiters.values
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once the gate is open; throws `CancellationError` when the task is cancelled first.
    func wait() async throws {
        let id = state.withLock { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (waiter: CheckedContinuation<Void, any Error>) in
                let outcome: Result<Void, any Error>? = state.withLock { state in
                    if state.isOpen { return .success(()) }
                    // Cancellation is flagged before onCancel runs, so one of the two sees it.
                    if Task.isCancelled { return .failure(CancellationError()) }
                    state.waiters[id] = waiter
                    return nil
                }
                if let outcome { waiter.resume(with: outcome) }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume(throwing: CancellationError())
        }
    }
}

/// A long-running part of a service that starts once the service's start-up work is done,
/// or never, when the service stops first.
struct AfterStartup: Service {
    let service: any Service
    let started: StartupGate

    func run() async throws {
        do {
            try await cancelWhenGracefulShutdown { try await started.wait() }
        } catch is CancellationError {
            return
        }
        try await service.run()
    }
}
