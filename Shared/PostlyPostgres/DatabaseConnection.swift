import NIOPosix
import Tracing

/// One connection lent by `Database.withConnection` or `Database.transaction`, valid for the
/// duration of that call. Statements on it run one after another, in the same session.
public struct DatabaseConnection: Sendable {
    let connection: PostgresConnection
    let threadPool: NIOThreadPool
    let commitSignals: CommitSignals
    /// Inside `transaction`: what to signal when it commits, and its id.
    var openTransaction: OpenTransaction?

    init(connection: PostgresConnection, threadPool: NIOThreadPool, commitSignals: CommitSignals) {
        self.connection = connection
        self.threadPool = threadPool
        self.commitSignals = commitSignals
    }

    /// Runs this process's `Database.onCommit(signalling: channel)` handlers with `payload` when
    /// the current transaction commits (at once outside a transaction). See `CommitSignals` for
    /// why this is not `NOTIFY`.
    public func signalAfterCommit(_ channel: String, payload: String = "") {
        let signal = CommitSignals.Signal(channel: channel, payload: payload)
        if let openTransaction {
            openTransaction.add(signal)
        } else {
            commitSignals.deliver([signal])
        }
    }

    /// Runs a query and returns its rows.
    public func query(_ sql: SQL) async throws -> [Row] {
        let connection = self.connection
        return try await traced(sql) { try await threadPool.runBlocking { try connection.run(sql).rows?.rows ?? [] } }
    }

    /// Runs a statement whose answer the caller does not need (a log entry, a total, an
    /// outbox row). Inside a transaction it goes with the next statement or the commit, in the
    /// same round trip, and an error of it is thrown there; outside one it runs at once.
    public func executeLater(_ sql: SQL) async throws {
        if openTransaction != nil {  // set exactly inside `transaction`
            connection.runLater(sql)
        } else {
            try await execute(sql)
        }
    }

    /// The current transaction's id on the server (`pg_current_xact_id()::text`), as one of its
    /// statements returned it, and `evidence`, a query whose one row's `present` says that a
    /// row only this transaction can have written is there: a COMMIT whose answer is lost is
    /// then settled by asking the server what became of the transaction (`LostCommit`).
    /// Inside a transaction only.
    public func noteTransactionId(_ id: String, evidence: SQL) {
        openTransaction?.identity = .init(id: id, evidence: evidence)
    }

    /// Runs a statement and returns the number of rows it affected.
    @discardableResult
    public func execute(_ sql: SQL) async throws -> Int {
        let connection = self.connection
        return try await traced(sql) { try await threadPool.runBlocking { try connection.run(sql).affectedRows } }
    }

    /// A client span of the statement, its text with placeholders (never a value), in the
    /// trace of the caller; nothing when nothing is traced.
    private func traced<T>(_ sql: SQL, _ body: () async throws -> T) async throws -> T {
        try await withSpan("db.query", ofKind: .client) { span in
            span.attributes["db.system.name"] = "postgresql"
            span.attributes["db.query.text"] = sql.text
            return try await body()
        }
    }

    /// No `statement_timeout` for the rest of the transaction and no answer timeout until the
    /// connection is returned: for statements that may rightly run for long (a migration
    /// rewriting a table, or waiting for another instance's). Inside a transaction only.
    public func removeTimeouts() async throws {
        try await execute("SET LOCAL statement_timeout = 0")
        connection.removeAnswerTimeout()
    }

    /// Runs SQL text without parameters as it is; several statements separated by `;` allowed
    /// (migrations). Never for text built from outside values.
    public func executeScript(unescaped text: String) async throws {
        let connection = self.connection
        try await threadPool.runBlocking { _ = try connection.runScript(text) }
    }

    /// `BEGIN` goes with the transaction's first statement and `COMMIT` with its last
    /// statements whose answers nobody waits for (`executeLater`): a write of a few statements
    /// takes as many round trips as it has answers to wait for.
    func transaction<T: Sendable>(isolation: IsolationLevel, _ body: (DatabaseConnection) async throws -> T) async throws -> T {
        let connection = self.connection
        connection.begin("BEGIN ISOLATION LEVEL \(isolation.rawValue)")
        var inTransaction = self
        let open = OpenTransaction()
        inTransaction.openTransaction = open
        let value: T
        do {
            value = try await body(inTransaction)
        } catch {
            // If even the rollback fails, the connection is closed on release, which rolls back too.
            _ = try? await threadPool.runBlocking { try connection.rollback() }
            throw error
        }
        var status: String
        do {
            status = try await threadPool.runBlocking { try connection.commit() }
        } catch DatabaseError.commitOutcomeUnknown {
            let outcome =
                if let identity = open.identity {
                    await LostCommit.outcome(of: identity, configuration: connection.configuration, threadPool: threadPool)
                } else {
                    LostCommit.Outcome.unknown
                }
            switch outcome {
            case .committed: status = "COMMIT"
            // Nothing was written: as a connection lost before the commit, run again if retried.
            case .rolledBack: throw DatabaseError.connectionFailed("the connection was lost during COMMIT, which did not commit")
            case .unknown:
                // It may have committed: its signals (wake-ups, caches dropped) go out anyway,
                // harmless if it did not.
                commitSignals.deliver(open.signals)
                throw DatabaseError.commitOutcomeUnknown
            }
        }
        // COMMIT of a transaction that an error (caught inside the body) aborted rolls back.
        guard status == "COMMIT" else {
            throw DatabaseError.server(sqlState: "25P02", message: "the transaction was aborted by an earlier error and rolled back")
        }
        commitSignals.deliver(open.signals)
        return value
    }
}
