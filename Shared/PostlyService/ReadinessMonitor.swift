import PostlyEvents
import ServiceLifecycle
import Synchronization

/// Runs the readiness checks in the background and keeps the last result, so `/health/ready`
/// answers at once whatever a dependency is doing. Checking on each request made the probe
/// wait for the check itself, and a blocking C call (librdkafka's metadata request) cannot be
/// cancelled: with the broker down the answer took 2-3 s, longer than a checker's timeout.
public final class ReadinessMonitor: Service {
    /// How long one check may take before its dependency counts as unreachable.
    static let checkTimeout = Duration.seconds(2)

    private let checks: Mutex<[ReadinessCheck]> = Mutex([])
    /// The names of the failing dependencies after the last round; nil before the first.
    private let failing: Mutex<[String]?> = Mutex(nil)
    private let interval: Duration

    /// - Parameter interval: the pause between two rounds of checks: each round asks the broker
    ///   for metadata, which an idle suite's broker felt at every half second.
    public init(interval: Duration = .seconds(2)) {
        self.interval = interval
    }

    /// Sets what to check; the router does this when it adds `/health/ready`.
    func check(_ checks: [ReadinessCheck]) {
        self.checks.withLock { $0 = checks }
    }

    /// The failing dependencies as last seen; nil while the first round runs.
    var lastFailing: [String]? {
        failing.withLock { $0 }
    }

    public func run() async throws {
        while !Task.isShuttingDownGracefully, !Task.isCancelled {
            let result = await Self.failingNames(of: checks.withLock { $0 })
            failing.withLock { $0 = result }
            await sleepUnlessShuttingDown(for: interval)
        }
    }

    static func failingNames(of checks: [ReadinessCheck]) async -> [String] {
        await withTaskGroup(of: String?.self) { group in
            for check in checks {
                group.addTask {
                    do {
                        try await withTimeout(checkTimeout) { try await check.check() }
                        return nil
                    } catch {
                        return check.name
                    }
                }
            }
            var failing: [String] = []
            for await name in group { if let name { failing.append(name) } }
            return failing.sorted()
        }
    }
}

struct TimedOut: Error {}

/// Runs `body`, or throws `TimedOut` after `duration` and cancels it. Returns at the deadline
/// even when `body` goes on: a blocking C call (libpq waiting on a stalled server) ignores
/// cancellation, and a task group, which waits for its every task, would wait with it.
func withTimeout<T: Sendable>(_ duration: Duration, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    let outcome = FirstOutcome<T>()
    return try await withCheckedThrowingContinuation { continuation in
        outcome.hold(continuation)
        let work = Task {
            do {
                outcome.resume(with: .success(try await body()))
            } catch {
                outcome.resume(with: .failure(error))
            }
        }
        Task {
            try? await Task.sleep(for: duration)
            work.cancel()
            outcome.resume(with: .failure(TimedOut()))
        }
    }
}

/// A continuation resumed by whichever outcome comes first; the later one is dropped.
private final class FirstOutcome<T: Sendable>: Sendable {
    private let continuation = Mutex<CheckedContinuation<T, any Error>?>(nil)

    func hold(_ continuation: CheckedContinuation<T, any Error>) {
        self.continuation.withLock { $0 = continuation }
    }

    func resume(with result: Result<T, any Error>) {
        continuation.withLock { $0.take() }?.resume(with: result)
    }
}
