import Logging
import NIOPosix
import ServiceLifecycle
import Synchronization

/// A pool of connections to one PostgreSQL database.
///
/// At most `poolSize` connections, opened on first use; callers beyond that wait in line
/// (first come, first served). A connection the server dropped is opened again on its next
/// use, so the pool outlives a server restart; while the server is down, a query fails at
/// once with `DatabaseError.connectionFailed`. libpq blocks, so every call runs on a thread
/// pool of the pool's own, never on the cooperative pool or an event loop.
///
/// As a `Service` it stays open until graceful shutdown, then closes its connections.
public final class Database: Service, Sendable {
    private struct Waiter {
        var id: UInt64
        var continuation: CheckedContinuation<PostgresConnection, any Error>
        /// Gives the wait up after `PostgresConfiguration.leaseTimeout`.
        var timer: Task<Void, any Error>?

        func resume(with result: Result<PostgresConnection, any Error>) {
            timer?.cancel()
            continuation.resume(with: result)
        }
    }

    private struct PoolState {
        var idle: [PostgresConnection]
        var waiters: [Waiter] = []
        var nextWaiterID: UInt64 = 0
        var isClosed = false
        /// When a connection last came back from a lease with its server's every answer.
        var lastAnswered: ContinuousClock.Instant?
    }

    /// When set, no wait of the task for a pooled connection or for the server goes past it: a
    /// request's budget (set for each by the service kit), so that a frozen server answers it
    /// in time however many statements it runs. A wait cut short fails with `timedOut`.
    @TaskLocal public static var deadline: ContinuousClock.Instant?

    public let configuration: PostgresConfiguration
    let logger: Logger
    let threadPool: NIOThreadPool
    let commitSignals = CommitSignals()
    private let state: Mutex<PoolState>

    public init(configuration: PostgresConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        let size = max(1, configuration.poolSize)
        self.threadPool = NIOThreadPool(numberOfThreads: size)
        threadPool.start()
        self.state = Mutex(PoolState(idle: (0..<size).map { _ in PostgresConnection(configuration: configuration) }))
    }

    deinit {
        threadPool.shutdownGracefully { _ in }
    }

    /// Keeps the pool open until graceful shutdown, then closes it.
    public func run() async throws {
        try? await gracefulShutdown()
        await close()
    }

    /// Closes idle connections now and the others when they come back; later calls fail
    /// with `DatabaseError.closed`.
    public func close() async {
        let (idle, waiters) = state.withLock { state in
            state.isClosed = true
            defer {
                state.idle = []
                state.waiters = []
            }
            return (state.idle, state.waiters)
        }
        for waiter in waiters { waiter.resume(with: .failure(DatabaseError.closed)) }
        for connection in idle { connection.close() }
        try? await threadPool.shutdownGracefully()
    }

    // MARK: - Queries

    /// Runs a query and returns its rows.
    public func query(_ sql: SQL) async throws -> [Row] {
        try await withConnection { try await $0.query(sql) }
    }

    /// Runs a statement and returns the number of rows it affected.
    @discardableResult
    public func execute(_ sql: SQL) async throws -> Int {
        try await withConnection { try await $0.execute(sql) }
    }

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    public func transaction<T: Sendable>(
        isolation: IsolationLevel = .readCommitted,
        _ body: (DatabaseConnection) async throws -> T
    ) async throws -> T {
        try await withConnection { connection in
            try await connection.transaction(isolation: isolation, body)
        }
    }

    /// `transaction`, run again after a transient error (`DatabaseError.isTransient`: a
    /// deadlock, a serialization failure, a connection lost before the commit went out), up
    /// to `attempts` runs in all, each after a short randomized pause so that two
    /// transactions that deadlocked do not collide again; then the error is thrown. `body`
    /// must change nothing but the database: it may run more than once. Nothing is run again
    /// past the task's `deadline`.
    public func retryingTransaction<T: Sendable>(
        isolation: IsolationLevel = .readCommitted, attempts: Int = 4,
        _ body: (DatabaseConnection) async throws -> T
    ) async throws -> T {
        var attempt = 1
        while true {
            do {
                return try await transaction(isolation: isolation, body)
            } catch let error as DatabaseError where error.isTransient && attempt < attempts && Self.deadline.map({ .now < $0 }) ?? true {
                logger.debug("transient database error; running the transaction again", metadata: ["error": "\(error)", "attempt": "\(attempt)"])
                try await Task.sleep(for: .milliseconds(Int.random(in: 5...20) * attempt))
                attempt += 1
            }
        }
    }

    /// Lends one connection to `body`, for several statements on the same session.
    public func withConnection<T: Sendable>(_ body: (DatabaseConnection) async throws -> T) async throws -> T {
        let deadline = Self.deadline
        let connection = try await lease(by: deadline)
        defer { release(connection) }
        if let deadline { connection.setDeadline(deadline) }
        return try await body(DatabaseConnection(connection: connection, threadPool: threadPool, commitSignals: commitSignals))
    }

    /// `NOTIFY channel, payload` (through `pg_notify`, so both are bound values).
    public func notify(channel: String, payload: String) async throws {
        try await execute("SELECT pg_notify(\(channel), \(payload))")
    }

    /// Succeeds when the server answers a query (for readiness checks). With every connection
    /// leased, one that came back answered within the last second answers for the server: the
    /// ping waited behind the requests, past the readiness check's 2 s, and a busy instance
    /// (with the relay holding a connection during a broker outage, sooner) said it was down.
    public func ping() async throws {
        let busyAndAnswering = state.withLock { state in
            !state.isClosed && state.idle.isEmpty && state.lastAnswered.map { $0.duration(to: .now) < .seconds(1) } == true
        }
        if busyAndAnswering { return }
        try await execute("SELECT 1")
    }

    // MARK: - The pool

    private func lease(by deadline: ContinuousClock.Instant?) async throws -> PostgresConnection {
        enum Lease {
            case ready(PostgresConnection)
            case wait(UInt64)
            case closed
            case cancelled
        }
        let immediate: Lease = state.withLock { state in
            if state.isClosed { return .closed }
            if let connection = state.idle.popLast() { return .ready(connection) }
            state.nextWaiterID += 1
            return .wait(state.nextWaiterID)
        }
        switch immediate {
        case .ready(let connection): return connection
        case .closed: throw DatabaseError.closed
        case .cancelled: throw CancellationError()
        case .wait(let id):
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    let outcome: Lease? = state.withLock { state in
                        if state.isClosed { return .closed }
                        if Task.isCancelled { return .cancelled }
                        // A connection may have come back since the first look.
                        if let connection = state.idle.popLast() { return .ready(connection) }
                        state.waiters.append(Waiter(id: id, continuation: continuation, timer: giveUp(id, by: deadline)))
                        return nil
                    }
                    switch outcome {
                    case .ready(let connection): continuation.resume(returning: connection)
                    case .closed: continuation.resume(throwing: DatabaseError.closed)
                    case .cancelled: continuation.resume(throwing: CancellationError())
                    case .wait, nil: break
                    }
                }
            } onCancel: {
                removeWaiter(id)?.resume(with: .failure(CancellationError()))
            }
        }
    }

    /// Ends the wait of waiter `id` after the lease timeout or at `deadline`, whichever comes
    /// first, if it still waits then.
    private func giveUp(_ id: UInt64, by deadline: ContinuousClock.Instant?) -> Task<Void, any Error>? {
        limited(configuration.leaseTimeout, by: deadline).map { timeout in
            Task {
                try await Task.sleep(for: timeout)
                removeWaiter(id)?.resume(with: .failure(DatabaseError.timedOut("no pooled connection came free within \(timeout)")))
            }
        }
    }

    /// The waiter `id`, no longer waiting; nil when it was served already.
    private func removeWaiter(_ id: UInt64) -> Waiter? {
        state.withLock { state in
            state.waiters.firstIndex { $0.id == id }.map { state.waiters.remove(at: $0) }
        }
    }

    private func release(_ connection: PostgresConnection) {
        let answered = connection.resetAfterUse()
        let next: Waiter? = state.withLock { state in
            if state.isClosed { return nil }
            if answered { state.lastAnswered = .now }
            if state.waiters.isEmpty {
                state.idle.append(connection)
                return nil
            }
            return state.waiters.removeFirst()
        }
        if let next {
            next.resume(with: .success(connection))
        } else if state.withLock({ $0.isClosed }) {
            connection.close()
        }
    }
}

