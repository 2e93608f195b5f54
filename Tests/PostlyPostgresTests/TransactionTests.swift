import Foundation
import Logging
import PostlyPostgres
import Synchronization
import Testing
import TestSupport

@Suite("Transactions and errors")
struct TransactionTests {
    struct Boom: Error {}

    @Test func aThrownErrorRollsTheTransactionBack() async throws {
        try await TestDatabase.with { database in
            try await database.execute("CREATE TABLE accounts (name text PRIMARY KEY, balance int NOT NULL)")
            try await database.execute("INSERT INTO accounts VALUES ('ann', 100)")
            await #expect(throws: Boom.self) {
                try await database.transaction { connection in
                    try await connection.execute("UPDATE accounts SET balance = balance - 60 WHERE name = 'ann'")
                    try await connection.execute("INSERT INTO accounts VALUES ('bob', 60)")
                    throw Boom()
                }
            }
            let rows = try await database.query("SELECT name, balance FROM accounts ORDER BY name")
            #expect(rows.count == 1)
            #expect(try rows.first?.decode("balance", as: Int.self) == 100)
        }
    }

    @Test func aReturningBodyCommits() async throws {
        try await TestDatabase.with { database in
            try await database.execute("CREATE TABLE items (n int)")
            let inserted = try await database.transaction(isolation: .serializable) { connection in
                try await connection.execute("INSERT INTO items SELECT generate_series(1, 3)")
            }
            #expect(inserted == 3)
            #expect(try await database.query("SELECT n FROM items").count == 3)
        }
    }

    @Test func anErrorCaughtInsideTheBodyStillPreventsTheCommit() async throws {
        try await TestDatabase.with { database in
            try await database.execute("CREATE TABLE items (n int PRIMARY KEY)")
            await #expect(throws: DatabaseError.self) {
                try await database.transaction { connection in
                    try await connection.execute("INSERT INTO items VALUES (1)")
                    _ = try? await connection.execute("INSERT INTO items VALUES (1)")
                }
            }
            #expect(try await database.query("SELECT n FROM items").isEmpty)
        }
    }

    /// `executeLater` sends its statement with the next one or the commit: a write's
    /// statements whose answers nobody needs cost no round trip of their own.
    @Test func statementsSentLaterGoWithTheNextStatementOrTheCommit() async throws {
        try await TestDatabase.with { database in
            try await database.execute("CREATE TABLE items (n int PRIMARY KEY)")
            let seen = try await database.transaction { connection in
                try await connection.executeLater("INSERT INTO items VALUES (\(1))")
                try await connection.executeLater("INSERT INTO items VALUES (\(2))")
                let seen = try await connection.query("SELECT count(*) AS n FROM items")[0].decode("n", as: Int.self)
                try await connection.executeLater("INSERT INTO items VALUES (\(3))")
                return seen
            }
            #expect(seen == 2)
            #expect(try await database.query("SELECT n FROM items ORDER BY n").map { try $0.decode("n", as: Int.self) } == [1, 2, 3])
        }
    }

    /// A statement refused for a parameter is sent nowhere, and takes nothing pending with it: a
    /// body that catches the refusal commits its earlier statements, not a COMMIT alone.
    @Test func aStatementRefusedForItsParametersLeavesWhatIsPendingToCommit() async throws {
        try await TestDatabase.with { database in
            try await database.execute("CREATE TABLE items (n int PRIMARY KEY, note text)")
            try await database.transaction { connection in
                try await connection.executeLater("INSERT INTO items VALUES (\(1), 'kept')")
                await #expect(throws: DatabaseError.self) {
                    try await connection.execute("INSERT INTO items VALUES (\(2), \("a\u{0}b"))")
                }
            }
            #expect(try await database.query("SELECT n FROM items").map { try $0.decode("n", as: Int.self) } == [1])
        }
    }

    @Test func aStatementSentLaterFailsWhereItIsSentAndNothingIsKept() async throws {
        try await TestDatabase.with { database in
            try await database.execute("CREATE TABLE items (n int PRIMARY KEY)")
            try await database.execute("INSERT INTO items VALUES (1)")
            // Its error is thrown by the statement it went with, and the transaction rolls back.
            await #expect(throws: DatabaseError.uniqueViolation(constraint: "items_pkey")) {
                try await database.transaction { connection in
                    try await connection.execute("INSERT INTO items VALUES (2)")
                    try await connection.executeLater("INSERT INTO items VALUES (\(1))")
                    try await connection.executeLater("INSERT INTO items VALUES (\(3))")
                    _ = try await connection.query("SELECT 1")
                }
            }
            // Or by the commit, when nothing follows it.
            await #expect(throws: DatabaseError.uniqueViolation(constraint: "items_pkey")) {
                try await database.transaction { connection in
                    try await connection.execute("INSERT INTO items VALUES (4)")
                    try await connection.executeLater("INSERT INTO items VALUES (\(1))")
                }
            }
            // A value libpq cannot send fails before anything of the transaction is sent.
            await #expect(throws: DatabaseError.self) {
                try await database.transaction { connection in
                    try await connection.executeLater("INSERT INTO items VALUES (\(5))")
                    try await connection.executeLater("INSERT INTO items SELECT 6 WHERE \("a\u{0}b") <> ''")
                }
            }
            #expect(try await database.query("SELECT n FROM items ORDER BY n").map { try $0.decode("n", as: Int.self) } == [1])
            // The pool's connections are usable afterwards.
            _ = try await database.transaction { connection in try await connection.execute("INSERT INTO items VALUES (7)") }
            #expect(try await database.query("SELECT count(*) AS n FROM items")[0].decode("n", as: Int.self) == 2)
        }
    }

    @Test func aUniqueViolationNamesTheConstraint() async throws {
        try await TestDatabase.with { database in
            try await database.execute("CREATE TABLE users (id serial PRIMARY KEY, email text NOT NULL CONSTRAINT users_email_key UNIQUE)")
            try await database.execute("INSERT INTO users (email) VALUES (\("a@example.com"))")
            await #expect(throws: DatabaseError.uniqueViolation(constraint: "users_email_key")) {
                try await database.execute("INSERT INTO users (email) VALUES (\("a@example.com"))")
            }
            // The connection is usable afterwards.
            try await database.ping()
        }
    }

    @Test func aSerializationFailureIsReportedAsSuch() async throws {
        try await TestDatabase.with { database in
            try await database.execute("CREATE TABLE counter (n int)")
            try await database.execute("INSERT INTO counter VALUES (0)")
            let error = await #expect(throws: DatabaseError.self) {
                try await database.transaction(isolation: .repeatableRead) { first in
                    _ = try await first.query("SELECT n FROM counter")
                    // Another session changes the row after this snapshot was taken.
                    try await database.execute("UPDATE counter SET n = n + 1")
                    try await first.execute("UPDATE counter SET n = n + 10")
                }
            }
            #expect(error == .serializationFailure)
        }
    }

    /// Terminated (an operator, a failover, a restart's fast shutdown) while the transaction
    /// waited between statements: COMMIT never left, so the transaction is known to be gone and
    /// may be run again (a write unit does), which "outcome unknown" would have forbidden.
    /// A transaction whose body ends past the task's deadline (a request's) is rolled back, its
    /// COMMIT never sent: one sent then was cut at once, its outcome unknown (503) though the
    /// server committed it.
    @Test func aTransactionPastItsDeadlineRollsBackWithoutSendingItsCommit() async throws {
        try await TestDatabase.with { database in
            try await database.execute("CREATE TABLE steps (n int)")
            let error = await #expect(throws: DatabaseError.self) {
                try await Database.$deadline.withValue(.now + .milliseconds(500)) {
                    try await database.transaction { connection in
                        try await connection.execute("INSERT INTO steps VALUES (1)")
                        try await Task.sleep(for: .seconds(1))
                    }
                }
            }
            guard case .timedOut? = error else {
                Issue.record("expected timedOut, got \(String(describing: error))")
                return
            }
            #expect(try await database.query("SELECT n FROM steps").isEmpty)
        }
    }

    @Test func aConnectionLostBeforeCommitIsSentIsAConnectionFailureNotAnUnknownOutcome() async throws {
        try await TestDatabase.with { database in
            try await database.execute("CREATE TABLE steps (n int)")
            let error = await #expect(throws: DatabaseError.self) {
                try await database.transaction { connection in
                    try await connection.execute("INSERT INTO steps VALUES (1)")
                    let pid = try await connection.query("SELECT pg_backend_pid() AS pid")[0].decode("pid", as: Int.self)
                    try await database.execute("SELECT pg_terminate_backend(\(pid)::int)")
                    // Gone, its socket closed with it (the server runs on this machine in the tests).
                    #expect(try await eventually { kill(pid_t(pid), 0) != 0 })
                }
            }
            guard case .connectionFailed? = error else {
                Issue.record("expected connectionFailed, got \(String(describing: error))")
                return
            }
            #expect(error?.isTransient == true)
            #expect(try await database.query("SELECT n FROM steps").isEmpty)
        }
    }

    /// A connection the server closes during a statement outside a transaction (a restart)
    /// connects again for the next one: it was taken for lost inside a transaction, and every
    /// later statement on it failed (a lost COMMIT's questions after a restart among them).
    @Test func aConnectionLostDuringAStatementOutsideATransactionConnectsAgain() async throws {
        try await TestDatabase.with { database in
            try await database.withConnection { connection in
                let pid = try await connection.query("SELECT pg_backend_pid() AS pid")[0].decode("pid", as: Int.self)
                let ending = Task {
                    _ = try await eventually {
                        try await !database.query("SELECT 1 FROM pg_stat_activity WHERE pid = \(pid) AND query LIKE 'SELECT pg_sleep%'").isEmpty
                    }
                    try await database.execute("SELECT pg_terminate_backend(\(pid)::int)")
                }
                await #expect(throws: DatabaseError.self) { try await connection.execute("SELECT pg_sleep(10)") }
                try await ending.value
                #expect(try await connection.query("SELECT 1 AS one")[0].decode("one", as: Int.self) == 1)
            }
        }
    }

    /// A statement cancelled by `statement_timeout` (here a lock it waited for) is the
    /// database unable to do it now: 503 for a request, a later try for a consumer.
    @Test func aStatementPastItsTimeoutIsTheDatabaseUnavailable() async throws {
        try await TestDatabase.with { database in
            try await database.execute("CREATE TABLE counter (n int)")
            try await database.execute("INSERT INTO counter VALUES (0)")
            let error = await #expect(throws: DatabaseError.self) {
                try await database.transaction { holder in
                    try await holder.execute("UPDATE counter SET n = 1")
                    try await database.transaction { waiter in
                        try await waiter.execute("SET LOCAL statement_timeout = '100ms'")
                        try await waiter.execute("UPDATE counter SET n = 2")
                    }
                }
            }
            guard case .server(let sqlState, _)? = error else {
                Issue.record("expected a server error, got \(String(describing: error))")
                return
            }
            #expect(sqlState == "57014")
            #expect(error?.isUnavailable == true)
        }
    }

    /// COMMIT lost with its connection (the backend ended while committing) rolled back: asked
    /// afterwards, the server says so, and the write runs again, once.
    @Test func aCommitLostWithItsConnectionThatRolledBackIsRunAgain() async throws {
        try await TestDatabase.with { database in
            try await database.execute("CREATE TABLE items (n int)")
            try await database.slowCommits(of: "items")
            async let terminated = database.endBackendCommitting()
            let attempts = Mutex(0)
            try await database.retryingTransaction { connection in
                attempts.withLock { $0 += 1 }
                let id = try await connection.query("INSERT INTO items VALUES (1) RETURNING pg_current_xact_id()::text AS id")[0]
                connection.noteTransactionId(try id.decode("id"), evidence: "SELECT EXISTS (SELECT 1 FROM items)::text AS present")
            }
            #expect(try await terminated)
            #expect(attempts.withLock { $0 } == 2)
            #expect(try await database.query("SELECT n FROM items").map { try $0.decode("n", as: Int.self) } == [1])
        }
    }

    /// An id the server never recorded (a crash lost the transaction's WAL) may be given out
    /// again: the transaction that gets it answers for ours. Committed, it is not believed
    /// without the evidence of our rows; not given out yet ("in the future"), nothing of ours
    /// committed, and the write runs again.
    @Test func aCommitIsSettledOnlyByTheTransactionsOwnRecord() async throws {
        try await TestDatabase.with { database in
            try await database.execute("CREATE TABLE items (n int)")
            try await database.slowCommits(of: "items")
            let committedElsewhere = try await database.transaction { connection in
                try await connection.query("SELECT pg_current_xact_id()::text AS id")[0].decode("id", as: String.self)
            }
            let notYetGiven = try await database.query("SELECT (pg_current_xact_id()::text::bigint + 1000000)::text AS id")[0]
                .decode("id", as: String.self)
            let evidence: SQL = "SELECT EXISTS (SELECT 1 FROM items)::text AS present"

            async let terminated = database.endBackendCommitting()
            let error = await #expect(throws: DatabaseError.self) {
                try await database.retryingTransaction { connection in
                    try await connection.execute("INSERT INTO items VALUES (1)")
                    connection.noteTransactionId(committedElsewhere, evidence: evidence)
                }
            }
            #expect(try await terminated)
            #expect(error == .commitOutcomeUnknown)

            async let terminatedAgain = database.endBackendCommitting()
            let attempts = Mutex(0)
            try await database.retryingTransaction { connection in
                attempts.withLock { $0 += 1 }
                try await connection.execute("INSERT INTO items VALUES (2)")
                connection.noteTransactionId(notYetGiven, evidence: evidence)
            }
            #expect(try await terminatedAgain)
            #expect(attempts.withLock { $0 } == 2)
            #expect(try await database.query("SELECT n FROM items").map { try $0.decode("n", as: Int.self) } == [2])
        }
    }

    /// After a failover an address may still lead to the former primary, now a standby: a new
    /// connection to it is refused (and tried again), and a write on one already open is the
    /// database unavailable (503, a consumer's later try), not a 500 or a dead letter.
    @Test func aServerThatOnlyReadsIsTheDatabaseUnavailable() async throws {
        let test = try await TestDatabase.create(poolSize: 1)
        var readOnly = test.configuration
        readOnly.settings["default_transaction_read_only"] = "on"
        let standby = Database(configuration: readOnly, logger: Logger(label: "standby"))
        let refused = await #expect(throws: DatabaseError.self) { try await standby.ping() }
        #expect(refused?.isTransient == true)
        await standby.close()

        try await test.database.execute("CREATE TABLE steps (n int)")
        try await test.database.execute("SET default_transaction_read_only = on")
        let error = await #expect(throws: DatabaseError.self) { try await test.database.execute("INSERT INTO steps VALUES (1)") }
        #expect(error?.isUnavailable == true)
        await test.drop()
    }

    /// A transaction's first statement goes in one pipeline with its BEGIN and its
    /// preparation; a preparation the server refuses is that statement's error (it crashed
    /// the process while only the aborted command after it was read).
    @Test func aFirstStatementThatCannotBePreparedIsItsError() async throws {
        try await TestDatabase.with { database in
            let error = await #expect(throws: DatabaseError.self) {
                try await database.transaction { connection in
                    try await connection.query("SELECT missing FROM nowhere WHERE id = \(1)")
                }
            }
            guard case .server(let sqlState, _) = error else {
                Issue.record("expected a server error, got \(String(describing: error))")
                return
            }
            #expect(sqlState == "42P01")
            // The connection goes on serving.
            let answer = try await database.transaction { try await $0.query("SELECT \(2)::int AS n")[0].decode("n", as: Int.self) }
            #expect(answer == 2)
        }
    }

    /// A table altered under a statement prepared on the connection (a newer release's
    /// migration) fails that statement once inside a transaction, which is run again: the
    /// error reached the caller, on every pooled connection in turn.
    @Test func aTableAlteredUnderAPreparedStatementRunsTheTransactionAgain() async throws {
        try await TestDatabase.with(poolSize: 1) { database in
            try await database.execute("CREATE TABLE notes (id int)")
            try await database.execute("INSERT INTO notes VALUES (1)")
            let read: SQL = "SELECT * FROM notes WHERE id = \(1)"
            #expect(try await database.query(read).first != nil)
            try await database.execute("ALTER TABLE notes ADD COLUMN body text DEFAULT 'new'")
            let row = try await database.retryingTransaction { try await $0.query(read).first }
            #expect(try row?.decode("body", as: String.self) == "new")
            // Sent in a pipeline after a pending statement, too.
            #expect(try await database.query(read).first != nil)
            try await database.execute("ALTER TABLE notes ADD COLUMN more int DEFAULT 2")
            let more = try await database.retryingTransaction { connection in
                try await connection.executeLater("UPDATE notes SET id = 1")
                return try await connection.query(read).first
            }
            #expect(try more?.decode("more", as: Int.self) == 2)
        }
    }

    @Test func syntaxErrorsCarryTheirSQLState() async throws {
        try await TestDatabase.with { database in
            let error = await #expect(throws: DatabaseError.self) { try await database.query("SELEC 1") }
            guard case .server(let sqlState, _) = error else {
                Issue.record("expected a server error, got \(String(describing: error))")
                return
            }
            #expect(sqlState == "42601")
        }
    }
}
