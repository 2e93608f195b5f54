import Foundation
import Synchronization
import Logging
import PostlyPostgres
import Testing
import TestSupport

/// A server frozen with its connections alive (a paused container, a volume hung during a
/// commit's flush): its kernel still acknowledges and answers keepalives, and its own
/// `statement_timeout` never fires. Here one backend is stopped (SIGSTOP); the rest of the test
/// server goes on. A stopped backend is resumed within 10 s whatever happens, so a wait without
/// limit shows as a slow success, not a hung test.
@Suite("A server that stops answering", .timeLimit(.minutes(1)))
struct FrozenServerTests {
    @Test func aStatementTheServerNeverAnswersFailsInTimeAndItsTransactionNeverCommits() async throws {
        try await withFrozenBackendDatabase { database, backend in
            try await database.execute("CREATE TABLE steps (n int)")
            backend.stop(try await backendPID(database.query))
            let started = ContinuousClock.now
            let error = await #expect(throws: DatabaseError.self) {
                try await database.transaction { try await $0.execute("INSERT INTO steps VALUES (1)") }
            }
            #expect(ContinuousClock.now - started < .seconds(3))
            guard case .timedOut? = error else {
                Issue.record("expected timedOut, got \(String(describing: error))")
                return
            }
            #expect(error?.isUnavailable == true)
            // The pool's one connection is opened afresh and serves at once.
            #expect(try await database.query("SELECT n FROM steps").isEmpty)
        }
    }

    /// A statement after one that timed out inside the same transaction (a body that caught the
    /// error) must not run on a new connection outside the transaction, where it would commit
    /// alone and the transaction's COMMIT would report success.
    @Test func aTransactionWhoseConnectionTimedOutRunsNothingMore() async throws {
        try await withFrozenBackendDatabase { database, backend in
            try await database.execute("CREATE TABLE steps (n int)")
            await #expect(throws: DatabaseError.self) {
                try await database.transaction { connection in
                    try await connection.execute("INSERT INTO steps VALUES (1)")
                    backend.stop(try await backendPID(connection.query))
                    _ = try? await connection.execute("INSERT INTO steps VALUES (2)")
                    try await connection.execute("INSERT INTO steps VALUES (3)")
                }
            }
            #expect(try await database.query("SELECT n FROM steps").isEmpty)
        }
    }

    @Test func aCallerWaitingLongerThanTheTimeoutForAPooledConnectionIsRefused() async throws {
        try await withFrozenBackendDatabase { database, _ in
            let holding = Task { try await database.withConnection { _ in try await Task.sleep(for: .seconds(5)) } }
            try await Task.sleep(for: .milliseconds(200))
            let started = ContinuousClock.now
            let error = await #expect(throws: DatabaseError.self) { try await database.ping() }
            #expect(ContinuousClock.now - started < .seconds(3))
            guard case .timedOut? = error else {
                Issue.record("expected timedOut, got \(String(describing: error))")
                return
            }
            try await holding.value
            try await database.ping()
        }
    }
}

/// A fresh database with a pool of one connection and an answer timeout of 1 s, and a backend to
/// stop, resumed after `body` (or 10 s after it was stopped). The test then waits for the stopped
/// backend to end (its client gone, it rolls back).
private func withFrozenBackendDatabase(_ body: (Database, FrozenBackend) async throws -> Void) async throws {
    let test = try await TestDatabase.create(poolSize: 1)
    var configuration = test.configuration
    configuration.answerTimeout = .seconds(1)
    let database = Database(configuration: configuration, logger: Logger(label: "frozen-server"))
    let frozen = FrozenBackend()
    let outcome: Result<Void, any Error>
    do {
        try await body(database, frozen)
        outcome = .success(())
    } catch {
        outcome = .failure(error)
    }
    frozen.resume()
    await database.close()
    if let pid = frozen.pid { _ = try? await eventually { kill(pid, 0) != 0 } }
    await test.drop()
    try outcome.get()
}

/// The process serving the connection that `query` runs on.
private func backendPID(_ query: (SQL) async throws -> [Row]) async throws -> pid_t {
    try await query("SELECT pg_backend_pid() AS pid")[0].decode("pid", as: pid_t.self)
}

/// One stopped backend, resumed by `resume` or by a timer 10 s after it was stopped.
private final class FrozenBackend: Sendable {
    private let state = Mutex<(pid: pid_t?, timer: Task<Void, Never>?)>((nil, nil))

    var pid: pid_t? { state.withLock { $0.pid } }

    func stop(_ pid: pid_t) {
        kill(pid, SIGSTOP)
        let timer = Task {
            try? await Task.sleep(for: .seconds(10))
            kill(pid, SIGCONT)
        }
        state.withLock { $0 = (pid, timer) }
    }

    func resume() {
        let (pid, timer) = state.withLock { $0 }
        timer?.cancel()
        if let pid { kill(pid, SIGCONT) }
    }
}
