import Foundation
import Glibc
import Logging
import PostlyPostgres
import Testing
import TestSupport

/// A server frozen with its connections alive (a paused container, a volume hung during a
/// commit's flush): its kernel still acknowledges and answers keepalives, and its own
/// `statement_timeout` never fires. Here one backend of the test server, which runs on this
/// machine, is stopped (SIGSTOP); the rest of the server goes on. A stopped backend is resumed
/// 10 s later whatever happens, so a wait without limit shows as a slow success, not a hung test.
@Suite("A server that stops answering", .timeLimit(.minutes(1)))
struct FrozenServerTests {
    @Test func aStatementTheServerNeverAnswersFailsInTimeAndItsTransactionNeverCommits() async throws {
        try await withFrozenBackendDatabase { database, backend in
            try await database.execute("CREATE TABLE steps (n int)")
            try backend.stop(try await backendPID(database.query))
            guard let error = await expectTimedOutInTime({
                try await database.transaction { try await $0.execute("INSERT INTO steps VALUES (1)") }
            }) else { return }
            #expect(error.isUnavailable)
            // The pool's one connection is opened afresh and serves at once.
            #expect(try await database.query("SELECT n FROM steps").isEmpty)
            // The stopped backend, running again, finds its client gone and rolls back.
            await backend.resumeAndWaitForItsEnd()
            #expect(try await database.query("SELECT n FROM steps").isEmpty)
        }
    }

    /// A statement larger than the kernel's buffers (here 64 MB of parameter) waits for the
    /// server to read it: a frozen server never does, and the send waited until it was resumed.
    @Test func aStatementAFrozenServerNeverReadsFailsInTime() async throws {
        try await withFrozenBackendDatabase { database, backend in
            let large = String(repeating: "x", count: 64 << 20)
            // Prepared while the server runs: only the statement's parameters are then sent.
            _ = try await database.query("SELECT length(\("x")) AS n")
            try backend.stop(try await backendPID(database.query))
            guard await expectTimedOutInTime({
                try await database.query("SELECT length(\(large)) AS n")
            }) != nil else { return }
            // A fresh connection, to a server that reads, takes the statement.
            #expect(try await database.query("SELECT length(\(large)) AS n")[0].decode("n", as: Int.self) == large.count)
        }
    }

    /// The same inside a transaction, whose statements are sent together with its `BEGIN`.
    @Test func aTransactionAFrozenServerNeverReadsFailsInTimeAndNeverCommits() async throws {
        try await withFrozenBackendDatabase { database, backend in
            try await database.execute("CREATE TABLE steps (n int)")
            let large = String(repeating: "x", count: 64 << 20)
            try backend.stop(try await backendPID(database.query))
            guard await expectTimedOutInTime({
                try await database.transaction { try await $0.execute("INSERT INTO steps SELECT length(\(large))") }
            }) != nil else { return }
            await backend.resumeAndWaitForItsEnd()
            #expect(try await database.query("SELECT n FROM steps").isEmpty)
            try await database.transaction { try await $0.execute("INSERT INTO steps SELECT length(\(large))") }
            #expect(try await database.query("SELECT n FROM steps").map { try $0.decode("n", as: Int.self) } == [large.count])
        }
    }

    /// A body that throws (a 404, a failed precondition) after the server froze: its `ROLLBACK`
    /// waited for the server without limit, holding the request and the pooled connection.
    @Test func aTransactionGivenUpOnByItsBodyEndsInTime() async throws {
        struct GivenUp: Error {}
        try await withFrozenBackendDatabase { database, backend in
            try await database.execute("CREATE TABLE steps (n int)")
            let started = ContinuousClock.now
            await #expect(throws: GivenUp.self) {
                try await database.transaction { connection in
                    try await connection.execute("INSERT INTO steps VALUES (1)")
                    try backend.stop(try await backendPID(connection.query))
                    throw GivenUp()
                }
            }
            #expect(ContinuousClock.now - started < .seconds(5))
            await backend.resumeAndWaitForItsEnd()
            #expect(try await database.query("SELECT n FROM steps").isEmpty)
        }
    }

    /// COMMIT sent to a server that froze before reading it: the client gives up on the answer,
    /// and the server, running again, commits. Asked afterwards, it says so, and the write
    /// answers as committed; a 503 would have had the client write it again.
    @Test func aCommitWhoseAnswerNeverCameIsSettledAsCommitted() async throws {
        try await withFrozenBackendDatabase { database, backend in
            try await database.execute("CREATE TABLE steps (n int)")
            let answer = try await database.retryingTransaction { connection in
                let id = try await connection.query("INSERT INTO steps VALUES (1) RETURNING pg_current_xact_id()::text AS id")[0]
                connection.noteTransactionId(try id.decode("id"), evidence: "SELECT EXISTS (SELECT 1 FROM steps WHERE n = 1)::text AS present")
                try backend.stop(try await backendPID(connection.query), resumingAfter: .seconds(3))
                return 7
            }
            #expect(answer == 7)
            #expect(try await database.query("SELECT n FROM steps").map { try $0.decode("n", as: Int.self) } == [1])
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
                    try backend.stop(try await backendPID(connection.query))
                    _ = try? await connection.execute("INSERT INTO steps VALUES (2)")
                    try await connection.execute("INSERT INTO steps VALUES (3)")
                }
            }
            await backend.resumeAndWaitForItsEnd()
            #expect(try await database.query("SELECT n FROM steps").isEmpty)
        }
    }

    /// The server sends a pipeline's answers together at its end unless asked for each: a
    /// transaction of two slow statements, sent in one round trip, kept it silent for longer
    /// than the answer timeout.
    @Test func slowStatementsSentTogetherAreNotMistakenForAFrozenServer() async throws {
        try await withFrozenBackendDatabase { database, _ in
            let answer = try await database.transaction { connection in
                try await connection.executeLater("SELECT pg_sleep(1.2)")
                try await connection.executeLater("SELECT pg_sleep(1.2)")
                return try await connection.query("SELECT \(7)::int AS n")[0].decode("n", as: Int.self)
            }
            #expect(answer == 7)
        }
    }

    @Test func aCallerWaitingLongerThanTheTimeoutForAPooledConnectionIsRefused() async throws {
        try await withFrozenBackendDatabase { database, _ in
            let holding = try await holdingTheOnlyConnection(of: database, for: .seconds(6))
            guard await expectTimedOutInTime({ try await database.ping() }) != nil else { return }
            try await holding.value
            try await database.ping()
        }
    }

    /// A task's deadline (a request's) ends its waits, for the server and for a pooled
    /// connection, before the timeouts do (8 s here): a long poll's read after its 30 s wait,
    /// on a frozen server, answered after the gateway had given up.
    @Test func aDeadlineEndsTheWaitsBeforeTheTimeoutsDo() async throws {
        try await withFrozenBackendDatabase(timeouts: .seconds(8)) { database, backend in
            try backend.stop(try await backendPID(database.query))
            _ = await expectTimedOutInTime(within: .seconds(3)) {
                try await Database.$deadline.withValue(.now + .seconds(1)) {
                    try await database.transaction { try await $0.query("SELECT 1") }
                }
            }
            await backend.resumeAndWaitForItsEnd()

            let holding = try await holdingTheOnlyConnection(of: database, for: .seconds(4))
            _ = await expectTimedOutInTime(within: .seconds(3)) {
                try await Database.$deadline.withValue(.now + .seconds(1)) {
                    try await database.retryingTransaction { try await $0.query("SELECT 1") }
                }
            }
            try await holding.value
            try await database.ping()
        }
    }

    /// A server that takes connections and never answers (a listening socket nobody serves):
    /// connecting ends at the caller's deadline, not at the connect timeout (10 s here).
    @Test func connectingEndsAtTheCallersDeadline() async throws {
        let listener = try SilentListener()
        defer { listener.close() }
        let configuration = PostgresConfiguration(host: "127.0.0.1", port: listener.port, connectTimeout: 10)
        let database = Database(configuration: configuration, logger: Logger(label: "silent-server"))
        let started = ContinuousClock.now
        await #expect(throws: DatabaseError.self) {
            try await Database.$deadline.withValue(.now + .seconds(1)) { try await database.query("SELECT 1") }
        }
        // libpq's timeout is at least 2 s.
        #expect(ContinuousClock.now - started < .seconds(5))
        await database.close()
    }
}

/// A TCP socket on 127.0.0.1 that listens and never accepts: the kernel completes the
/// handshakes, and nothing ever answers.
private struct SilentListener {
    let descriptor: Int32
    let port: Int

    init() throws {
        struct Failed: Error { let call: String }
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw Failed(call: "socket") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                bind(descriptor, address, length) == 0 && listen(descriptor, 8) == 0 && getsockname(descriptor, address, &length) == 0
            }
        }
        guard bound else { throw Failed(call: "bind") }
        self.descriptor = descriptor
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    func close() {
        _ = Glibc.close(descriptor)
    }
}

/// Runs `body`, which must fail with `timedOut` within `limit` (5 s: the answer and lease
/// timeouts here are 2 s unless told); returns the error, or nil with the issue recorded.
private func expectTimedOutInTime<T>(within limit: Duration = .seconds(5), _ body: () async throws -> T) async -> DatabaseError? {
    let started = ContinuousClock.now
    let error = await #expect(throws: DatabaseError.self) { _ = try await body() }
    #expect(ContinuousClock.now - started < limit)
    guard case .timedOut? = error else {
        Issue.record("expected timedOut, got \(String(describing: error))")
        return nil
    }
    return error
}

/// A task holding the pool's one connection for `duration`, from when this returns.
private func holdingTheOnlyConnection(of database: Database, for duration: Duration) async throws -> Task<Void, any Error> {
    let held = Locked(false)
    let holding = Task {
        try await database.withConnection { _ in
            held.withLock { $0 = true }
            try await Task.sleep(for: duration)
        }
    }
    #expect(try await eventually { held.value })
    return holding
}

/// A fresh database with a pool of one connection, answer and lease timeouts of `timeouts`, and
/// a backend to stop, resumed after `body` at the latest.
private func withFrozenBackendDatabase(
    timeouts: Duration = .seconds(2), _ body: (Database, FrozenBackend) async throws -> Void
) async throws {
    let test = try await TestDatabase.create(poolSize: 1)
    var configuration = test.configuration
    configuration.answerTimeout = timeouts
    configuration.leaseTimeout = timeouts
    let database = Database(configuration: configuration, logger: Logger(label: "frozen-server"))
    let backend = FrozenBackend()
    let outcome: Result<Void, any Error>
    do {
        try await body(database, backend)
        outcome = .success(())
    } catch {
        outcome = .failure(error)
    }
    await backend.resumeAndWaitForItsEnd()
    await database.close()
    await test.drop()
    try outcome.get()
}

/// The process serving the connection that `query` runs on.
private func backendPID(_ query: (SQL) async throws -> [Row]) async throws -> pid_t {
    try await query("SELECT pg_backend_pid() AS pid")[0].decode("pid", as: pid_t.self)
}
