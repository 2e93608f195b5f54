import PostlyEvents
import ServiceLifecycle
import Synchronization

extension ServiceKit {
    /// Runs a one-off command of the service (`postly-posts republish`, say) in the service's
    /// own lifecycle: the start-up work, `command` with the database and the producer running,
    /// then (for a service that publishes) until its outbox is empty; then everything stops and
    /// closes, also when `command` throws. SIGINT and SIGTERM stop it the same way.
    public func run<T: Sendable>(command: @escaping @Sendable () async throws -> T) async throws -> T {
        let relay = OutboxRelay(database: database, publisher: producer, logger: logger)
        let runner = CommandRunner<T> { [self] in
            try await prepare()
            let value = try await command()
            if publishesEvents { try await relay.drain() }
            return value
        }
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: [
                    .init(service: database), .init(service: producer),
                    .init(service: runner, successTerminationBehavior: .gracefullyShutdownGroup, failureTerminationBehavior: .gracefullyShutdownGroup),
                ],
                gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        do {
            try await group.run()
        } catch {
            // The command's own error is the one to report; another part's only without it.
            guard runner.outcome != nil else { throw error }
        }
        guard let outcome = runner.outcome else { throw CancellationError() }
        return try outcome.get()
    }
}

/// The command as a service of its group: it runs once and keeps what came of it.
private final class CommandRunner<T: Sendable>: Service {
    private let command: @Sendable () async throws -> T
    private let result = Mutex<Result<T, any Error>?>(nil)

    init(_ command: @escaping @Sendable () async throws -> T) {
        self.command = command
    }

    var outcome: Result<T, any Error>? { result.withLock { $0 } }

    func run() async throws {
        do {
            let value = try await command()
            result.withLock { $0 = .success(value) }
        } catch {
            result.withLock { $0 = .failure(error) }
            throw error
        }
    }
}
