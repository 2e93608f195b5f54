import CLibPQ
import Foundation
import Synchronization

/// A libpq `PGconn`. Only `PostgresConnection` touches it, inside its lock and on a
/// thread-pool thread: libpq calls block, and one connection is not thread-safe.
struct ConnectionHandle: @unchecked Sendable {
    let pointer: OpaquePointer
}

/// One connection to the server, opened on first use and opened again after it was lost.
/// Its methods block: call them on the pool's thread pool, never on the cooperative pool.
final class PostgresConnection: Sendable {
    private struct PreparedStatement {
        var name: String
        var types: [PostgresType]
    }

    private struct State {
        var handle: ConnectionHandle?
        /// Prepared statements by SQL text, so a repeated query skips parsing and planning.
        var statements: [String: PreparedStatement] = [:]
        var nextStatementNumber = 0
        /// Whether the last command left a transaction open: a connection lost then must
        /// not be silently replaced, or the rest of the transaction would autocommit.
        var inTransaction = false
        /// Whether a transaction's `BEGIN` went out and its end has not: as `inTransaction`, but
        /// also true once the connection was closed under the transaction.
        var transactionSent = false
        /// How long to wait for the server's next byte; nil waits as long as it takes.
        var answerTimeout: Duration?
        /// When set, no wait for the server goes past it (a caller's own budget); cleared when
        /// the connection goes back to the pool.
        var deadline: ContinuousClock.Instant?
        /// What waits to go with the next statement, in the same round trip: a transaction's
        /// `BEGIN` (`begin`) and statements whose answers nobody waits for (`runLater`). Kept
        /// when a connection lost before its `BEGIN` was sent is replaced.
        var pending: [PipelineCommand] = []
    }

    /// One command of a pipeline: a statement with its parameters, or transaction control.
    enum PipelineCommand {
        case statement(SQL)
        case control(String)
    }

    /// What one statement answered.
    struct StatementResult {
        var rows: QueryResultStorage?
        var affectedRows: Int
        /// The command's status tag, such as `COMMIT` (or `ROLLBACK` for a transaction that an
        /// error aborted).
        var status: String
    }

    /// Enough for every statement a service has; beyond it statements run unprepared.
    private static let preparedStatementLimit = 512

    let configuration: PostgresConfiguration
    private let state: Mutex<State>

    init(configuration: PostgresConfiguration) {
        self.configuration = configuration
        state = Mutex(State(answerTimeout: configuration.answerTimeout))
    }

    deinit {
        state.withLock { state in
            if let handle = state.handle { PQfinish(handle.pointer) }
        }
    }

    /// Runs a statement with its parameters bound, after what is pending; `rows` is nil for a
    /// command without a result.
    func run(_ sql: SQL) throws(DatabaseError) -> StatementResult {
        try state.withLock { state throws(DatabaseError) in
            let handle = try handleToSend(&state)
            defer { Self.recordTransactionStatus(&state) }
            if !state.pending.isEmpty {
                return try runPipeline(afterPending: [.statement(sql)], on: handle, state: &state).last!
            }
            let parameters = try Parameters(sql)
            defer { parameters.deallocate() }
            let result = try execute(sql, parameters, on: handle, state: &state)
            defer { PQclear(result) }
            return Self.statementResult(result)
        }
    }

    /// Runs statements without parameters (migrations), several separated by `;` allowed,
    /// after what is pending. Returns the last command's status tag.
    @discardableResult
    func runScript(_ text: String) throws(DatabaseError) -> String {
        try state.withLock { state throws(DatabaseError) in
            // The server answers a script's statements together, after the last: each may take
            // up to `statement_timeout`, so no answer timeout applies (scripts are migrations and
            // the search reindex's schema swaps).
            let answerTimeout = state.answerTimeout
            state.answerTimeout = nil
            defer { state.answerTimeout = answerTimeout }
            return try runText(text, state: &state)
        }
    }

    /// Runs `text` unprepared, after what is pending; returns the last command's status tag.
    private func runText(_ text: String, state: inout State) throws(DatabaseError) -> String {
        let handle = try handleToSend(&state)
        defer { Self.recordTransactionStatus(&state) }
        if !state.pending.isEmpty { _ = try runPipeline(afterPending: [], on: handle, state: &state) }
        let result = try exchange(on: handle, state: &state) { PQsendQuery($0, text) }
        defer { PQclear(result) }
        try Self.check(result, handle)
        return String(cString: PQcmdStatus(result!))
    }

    // MARK: - Transactions, their statements sent together

    /// Opens a transaction with `command` (`BEGIN ...`), sent with its first statement.
    func begin(_ command: String) {
        state.withLock { state in
            state.pending = [.control(command)]
            state.transactionSent = false
        }
    }

    /// Sends `sql` with the next statement or the commit, in the same round trip; an error of
    /// it is thrown there.
    func runLater(_ sql: SQL) {
        state.withLock { $0.pending.append(.statement(sql)) }
    }

    /// Commits, with whatever is still pending; returns the status tag (`ROLLBACK` when an
    /// error had aborted the transaction). A transaction that never sent a statement has
    /// nothing to commit.
    func commit() throws(DatabaseError) -> String {
        try state.withLock { state throws(DatabaseError) in
            if case .control? = state.pending.first, state.pending.count == 1 {
                state.pending = []
                return "COMMIT"
            }
            // Lost before COMMIT went out: the transaction died with its connection, and may be
            // run again (connectionFailed). Past the deadline (timedOut), it rolls back when its
            // connection, still inside it, is closed on release.
            let handle = try handleToSend(&state)
            defer {
                state.transactionSent = false
                Self.recordTransactionStatus(&state)
            }
            do throws(DatabaseError) {
                return try runPipeline(afterPending: [.control("COMMIT")], on: handle, state: &state).last!.status
            } catch {
                switch error {
                case .connectionFailed, .timedOut: throw .commitOutcomeUnknown
                default: throw error
                }
            }
        }
    }

    /// Rolls back, dropping what is pending (nothing at all when no statement was sent).
    func rollback() throws(DatabaseError) {
        let begun = state.withLock { state in
            defer { state.pending = [] }
            if case .control? = state.pending.first { return false }
            return true
        }
        guard begun else { return }
        try state.withLock { state throws(DatabaseError) in
            defer { state.transactionSent = false }
            _ = try runText("ROLLBACK", state: &state)
        }
    }

    /// No answer timeout until the connection is returned to the pool: for statements that may
    /// rightly run for long (a migration rewriting a table, waiting for another's).
    func removeAnswerTimeout() {
        state.withLock { $0.answerTimeout = nil }
    }

    /// No wait for the server past `deadline` until the connection is returned to the pool.
    func setDeadline(_ deadline: ContinuousClock.Instant) {
        state.withLock { $0.deadline = deadline }
    }

    /// After a lease: a connection that is broken or still inside a transaction is closed, so
    /// the next user starts clean (closing rolls back whatever was left open). Returns whether
    /// it is still open: the server answered all it was asked on it (a statement it did not
    /// answer in time closed it).
    @discardableResult
    func resetAfterUse() -> Bool {
        state.withLock { state in
            state.pending = []
            state.transactionSent = false
            state.answerTimeout = configuration.answerTimeout
            state.deadline = nil
            guard let handle = state.handle else { return false }
            if state.inTransaction || PQstatus(handle.pointer) != CONNECTION_OK {
                Self.close(&state)
                return false
            }
            return true
        }
    }

    func close() {
        state.withLock { Self.close(&$0) }
    }

    /// Waits up to `timeout` milliseconds for `NOTIFY` payloads (after `LISTEN`); returns those
    /// that arrived, or none.
    func waitForNotifications(timeout: Int32) throws(DatabaseError) -> [String] {
        try state.withLock { state throws(DatabaseError) in
            guard let handle = state.handle else { throw .connectionFailed("not connected") }
            var descriptor = pollfd(fd: PQsocket(handle.pointer), events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, timeout) > 0 else { return [] }
            guard PQconsumeInput(handle.pointer) == 1, PQstatus(handle.pointer) == CONNECTION_OK else {
                let message = Self.errorMessage(handle)
                Self.close(&state)
                throw .connectionFailed(message)
            }
            var payloads: [String] = []
            while let notification = PQnotifies(handle.pointer) {
                payloads.append(String(cString: notification.pointee.extra))
                PQfreemem(notification)
            }
            return payloads
        }
    }

    // MARK: - Inside the lock

    /// The connection to send on, opened again when it was lost outside a transaction. Nothing
    /// is sent once the caller's deadline has passed: a statement then could only be cut at
    /// once, and a COMMIT cut so has an unknown outcome, where one never sent is a rollback.
    private func handleToSend(_ state: inout State) throws(DatabaseError) -> ConnectionHandle {
        if let deadline = state.deadline, deadline <= .now { throw .timedOut("the caller's deadline passed") }
        if let handle = state.handle, Self.isHealthy(handle) { return handle }
        if state.inTransaction || state.transactionSent {
            throw .connectionFailed("the connection was lost inside a transaction")
        }
        if state.handle != nil {
            Self.close(&state)
        }
        let handle = try connect(by: state.deadline)
        state.handle = handle
        return handle
    }

    /// Cheap check before reuse: an idle connection has nothing to read unless the server
    /// closed it. A restart sends a FATAL message, then closes the socket; libpq notices the
    /// close only on the read after the message, hence the loop.
    private static func isHealthy(_ handle: ConnectionHandle) -> Bool {
        for _ in 0..<4 {
            guard PQstatus(handle.pointer) == CONNECTION_OK else { return false }
            var descriptor = pollfd(fd: PQsocket(handle.pointer), events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, 0) > 0 else { return true }
            guard PQconsumeInput(handle.pointer) == 1 else { return false }
            while let notification = PQnotifies(handle.pointer) { PQfreemem(notification) }
        }
        // Still more to read from an idle connection: something is off, start afresh.
        return false
    }

    /// Whether the last command left a transaction open; none once the connection is closed.
    /// A connection the server closed during the command says nothing: it is where it was
    /// before (libpq's "unknown" was taken for inside a transaction, and a connection lost
    /// outside one never reconnected).
    private static func recordTransactionStatus(_ state: inout State) {
        guard let handle = state.handle else {
            state.inTransaction = false
            return
        }
        switch PQtransactionStatus(handle.pointer) {
        case PQTRANS_IDLE: state.inTransaction = false
        case PQTRANS_UNKNOWN: break
        default: state.inTransaction = true
        }
    }

    /// The connection is lost: closes it, with libpq's account of why taken first (closing
    /// frees the handle).
    private static func lost(_ state: inout State, _ handle: ConnectionHandle) -> DatabaseError {
        let message = errorMessage(handle)
        close(&state)
        return .connectionFailed(message)
    }

    private static func close(_ state: inout State) {
        if let handle = state.handle { PQfinish(handle.pointer) }
        state.handle = nil
        state.statements = [:]
        state.inTransaction = false
    }

    /// Timestamps are parsed in this form (see PostgresTimestamp); then the configuration's own.
    private var serverSettings: [(String, String)] {
        [("DateStyle", "ISO,YMD"), ("TimeZone", "UTC"), ("IntervalStyle", "iso_8601")]
            + configuration.settings.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    /// Opens a connection with `PQconnectdbParams`: each setting its own parameter, nothing
    /// glued into a connection string. Each address is tried no longer than the connect timeout
    /// or what is left before `deadline`, in libpq's whole seconds and at least its 2 (a
    /// caller with a second left waited the whole timeout for a server that never answered).
    private func connect(by deadline: ContinuousClock.Instant?) throws(DatabaseError) -> ConnectionHandle {
        var timeout = configuration.connectTimeout
        if let left = limited(nil, by: deadline) { timeout = max(2, min(timeout, Int((left / .seconds(1)).rounded(.up)))) }
        var settings: [(String, String)] = [
            ("host", configuration.host),
            ("port", String(configuration.port)),
            ("user", configuration.user),
            ("dbname", configuration.database),
            ("connect_timeout", String(timeout)),
            ("application_name", configuration.applicationName),
            ("client_encoding", "UTF8"),
            ("options", serverSettings.map { "-c \($0)=\($1)" }.joined(separator: " ")),
            // A server that vanished (its host lost, a partition) is noticed within about 25 s
            // instead of the kernel's two hours: a statement waiting for its answer, and a
            // LISTEN connection, which only ever reads, would otherwise wait as long.
            ("keepalives", "1"),
            ("keepalives_idle", "10"),
            ("keepalives_interval", "5"),
            ("keepalives_count", "3"),
            ("tcp_user_timeout", "25000"),
            // After a failover, an address may still lead to the former primary, now a standby.
            ("target_session_attrs", "read-write"),
        ]
        if let password = configuration.password { settings.append(("password", password.value)) }
        let keys = settings.map { strdup($0.0) }
        let values = settings.map { strdup($0.1) }
        defer {
            keys.forEach { free($0) }
            values.forEach { free($0) }
        }
        let pointer = (keys.map { UnsafePointer($0) } + [nil]).withUnsafeBufferPointer { keyPointers in
            (values.map { UnsafePointer($0) } + [nil]).withUnsafeBufferPointer { valuePointers in
                PQconnectdbParams(keyPointers.baseAddress, valuePointers.baseAddress, 0)
            }
        }
        guard let pointer else { throw .connectionFailed("libpq could not allocate a connection") }
        let handle = ConnectionHandle(pointer: pointer)
        // Sends never block: a server that stops reading (frozen, its receive window full) is
        // waited for in `flush`, no longer than the answer timeout.
        guard PQstatus(pointer) == CONNECTION_OK, PQsetnonblocking(pointer, 1) == 0 else {
            let message = Self.errorMessage(handle)
            PQfinish(pointer)
            throw .connectionFailed(message)
        }
        // Notices ("relation already exists, skipping") are not errors, and libpq would
        // print them to stderr.
        PQsetNoticeProcessor(pointer, { _, _ in }, nil)
        return handle
    }

    private func execute(
        _ sql: SQL, _ parameters: Parameters, on handle: ConnectionHandle, state: inout State
    ) throws(DatabaseError) -> OpaquePointer {
        let count = Int32(sql.bindings.count)
        let prepared: PreparedStatement?
        /// Prepared by an earlier call: a table it reads may have been altered since.
        var preparedEarlier = false
        if let statement = state.statements[sql.text] {
            prepared = statement.types == sql.types ? statement : nil
            preparedEarlier = prepared != nil
        } else if state.statements.count < Self.preparedStatementLimit {
            let statement = PreparedStatement(name: "postly_\(state.nextStatementNumber)", types: sql.types)
            state.nextStatementNumber += 1
            let result = try exchange(on: handle, state: &state) {
                PQsendPrepare($0, statement.name, sql.text, count, parameters.types)
            }
            defer { PQclear(result) }
            try Self.check(result, handle)
            state.statements[sql.text] = statement
            prepared = statement
        } else {
            prepared = nil
        }
        func sendUnprepared(_ pointer: OpaquePointer) -> Int32 {
            PQsendQueryParams(
                pointer, sql.text, count, parameters.types, parameters.values, parameters.lengths, parameters.formats, 0)
        }
        let result = try exchange(on: handle, state: &state) { pointer in
            if let prepared {
                PQsendQueryPrepared(pointer, prepared.name, count, parameters.values, parameters.lengths, parameters.formats, 0)
            } else {
                sendUnprepared(pointer)
            }
        }
        do throws(DatabaseError) {
            try Self.check(result, handle)
        } catch {
            PQclear(result)
            // A table altered under a prepared statement ("cached plan must not change result
            // type"): forget the statement and, outside a transaction, run the query unprepared;
            // inside one, the transaction may succeed if run again.
            if case .server(sqlState: "0A000", _) = error, preparedEarlier {
                state.statements[sql.text] = nil
                guard PQtransactionStatus(handle.pointer) == PQTRANS_IDLE else { throw .planInvalidated }
                let retry = try exchange(on: handle, state: &state, sendUnprepared)
                do throws(DatabaseError) {
                    try Self.check(retry, handle)
                } catch {
                    PQclear(retry)
                    throw error
                }
                return retry!
            }
            throw error
        }
        return result!
    }

    /// Sends a command with `send` and returns its answer as `PQexec` would (the last result;
    /// nil when the connection was lost), waiting for it no longer than the answer timeout.
    private func exchange(
        on handle: ConnectionHandle, state: inout State, _ send: (OpaquePointer) -> Int32
    ) throws(DatabaseError) -> OpaquePointer? {
        guard send(handle.pointer) == 1 else { throw Self.lost(&state, handle) }
        try Self.flush(handle, state: &state)
        var last: OpaquePointer?
        while true {
            let next: OpaquePointer?
            do throws(DatabaseError) {
                next = try Self.nextResult(on: handle, state: &state)
            } catch {
                PQclear(last)
                throw error
            }
            guard let result = next else { return last }
            PQclear(last)
            last = result
            if PQstatus(handle.pointer) == CONNECTION_BAD { return last }
        }
    }

    /// `PQgetResult`, once it can answer without blocking. A server that sends nothing for
    /// the answer timeout is taken as frozen with its connections alive (a paused container, a
    /// volume hung during a commit's flush): neither the kernel's keepalives nor its own
    /// `statement_timeout` would end the wait. The connection is closed, which rolls back an
    /// open transaction once the server runs again; a statement outside one may still apply.
    private static func nextResult(on handle: ConnectionHandle, state: inout State) throws(DatabaseError) -> OpaquePointer? {
        while PQisBusy(handle.pointer) == 1 {
            // What TLS has read and decrypted already, the socket no longer shows (libpq's own
            // wait looks there first too).
            if postly_tls_pending(handle.pointer) == 0 { try waitForSocket(POLLIN, handle, state: &state) }
            guard try consumeInput(handle, state: &state) else { break }
        }
        return PQgetResult(handle.pointer)
    }

    /// Reads what the server sent; false once the connection is lost, whose error (the
    /// server's own message, when it sent one before closing) `PQgetResult` then answers at
    /// once. A read that failed with the connection still open is taken as lost: `PQgetResult`
    /// would wait on it without limit.
    private static func consumeInput(_ handle: ConnectionHandle, state: inout State) throws(DatabaseError) -> Bool {
        if PQconsumeInput(handle.pointer) == 1 { return true }
        if PQstatus(handle.pointer) == CONNECTION_OK { throw lost(&state, handle) }
        return false
    }

    /// Sends what libpq still holds of the commands given it. A server that stops reading is
    /// given up on as one that stops answering; while waiting to write, what it sends is read,
    /// so that a server blocked on sending to us can go on reading.
    private static func flush(_ handle: ConnectionHandle, state: inout State) throws(DatabaseError) {
        while true {
            switch PQflush(handle.pointer) {
            case 0: return
            case 1: try waitForSocket(POLLIN | POLLOUT, handle, state: &state)
            default: throw lost(&state, handle)
            }
            guard try consumeInput(handle, state: &state) else { return }
        }
    }

    /// Waits for the socket to be ready for `events`, no longer than the answer timeout and not
    /// past the deadline, after which the connection is closed.
    private static func waitForSocket(_ events: Int32, _ handle: ConnectionHandle, state: inout State) throws(DatabaseError) {
        let milliseconds = limited(state.answerTimeout, by: state.deadline).map { Int32(clamping: Int64(($0 / .milliseconds(1)).rounded(.up))) } ?? -1
        while true {
            var descriptor = pollfd(fd: PQsocket(handle.pointer), events: Int16(events), revents: 0)
            let ready = poll(&descriptor, 1, milliseconds)
            if ready > 0 { return }
            if ready < 0, errno == EINTR { continue }
            if ready < 0 { throw lost(&state, handle) }
            close(&state)
            throw .timedOut("the server neither read nor answered within \(milliseconds) ms")
        }
    }

    /// Sends what is pending, then `extra`, in one round trip (libpq's pipeline mode) and
    /// returns their results in order. The server skips what follows an error; the first error
    /// is thrown. Statements are prepared as `execute` prepares them, their preparation sent in
    /// the same pipeline.
    private func runPipeline(
        afterPending extra: [PipelineCommand], on handle: ConnectionHandle, state: inout State
    ) throws(DatabaseError) -> [StatementResult] {
        let commands = state.pending + extra
        // Every statement's parameters are checked before anything is sent or taken from what
        // is pending: a caller that caught `invalidParameter` keeps its transaction whole.
        var parameters: [Parameters?] = []
        defer { parameters.forEach { $0?.deallocate() } }
        for command in commands {
            guard case .statement(let sql) = command else {
                parameters.append(nil)
                continue
            }
            parameters.append(try Parameters(sql))
        }
        if case .control? = state.pending.first { state.transactionSent = true }
        state.pending = []
        guard PQenterPipelineMode(handle.pointer) == 1 else { throw Self.lost(&state, handle) }
        /// What each result read back answers: a statement's preparation, or a command.
        enum Expected {
            case preparation(sql: String)
            case command(Int)
        }
        var expected: [Expected] = []
        /// The commands sent as statements prepared by an earlier call (see `execute`).
        var preparedEarlier = Set<Int>()
        for (index, command) in commands.enumerated() {
            let sent: Int32
            switch command {
            case .control(let text):
                sent = PQsendQueryParams(handle.pointer, text, 0, nil, nil, nil, nil, 0)
            case .statement(let sql):
                let values = parameters[index]!
                let count = Int32(sql.bindings.count)
                var prepared = state.statements[sql.text]
                if prepared?.types == sql.types { preparedEarlier.insert(index) }
                if prepared == nil, state.statements.count < Self.preparedStatementLimit {
                    let statement = PreparedStatement(name: "postly_\(state.nextStatementNumber)", types: sql.types)
                    state.nextStatementNumber += 1
                    guard PQsendPrepare(handle.pointer, statement.name, sql.text, count, values.types) == 1 else {
                        throw Self.lost(&state, handle)
                    }
                    state.statements[sql.text] = statement
                    expected.append(.preparation(sql: sql.text))
                    prepared = statement
                }
                sent =
                    if let prepared, prepared.types == sql.types {
                        PQsendQueryPrepared(handle.pointer, prepared.name, count, values.values, values.lengths, values.formats, 0)
                    } else {
                        PQsendQueryParams(handle.pointer, sql.text, count, values.types, values.values, values.lengths, values.formats, 0)
                    }
            }
            // The server sends a pipeline's answers at its end unless asked for each: a wait for
            // the next byte would then span every statement's time.
            guard sent == 1, PQsendFlushRequest(handle.pointer) == 1 else { throw Self.lost(&state, handle) }
            expected.append(.command(index))
        }
        guard PQpipelineSync(handle.pointer) == 1 else { throw Self.lost(&state, handle) }
        try Self.flush(handle, state: &state)
        var results = [StatementResult?](repeating: nil, count: commands.count)
        var firstError: DatabaseError?
        for item in expected {
            guard let result = try Self.nextResult(on: handle, state: &state) else {
                let lost = Self.lost(&state, handle)
                throw firstError ?? lost
            }
            defer { PQclear(result) }
            // Each command's results end with a NULL.
            while let more = try Self.nextResult(on: handle, state: &state) { PQclear(more) }
            let status = PQresultStatus(result)
            let succeeded = status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK || status == PGRES_EMPTY_QUERY
            switch item {
            case .preparation(let sql):
                // Not prepared after all: prepared again under a new name next time. Its
                // error is the pipeline's (the commands after it are only aborted).
                if !succeeded {
                    state.statements[sql] = nil
                    if status != PGRES_PIPELINE_ABORTED { firstError = firstError ?? Self.error(of: result, handle) }
                }
            case .command(let index):
                if succeeded {
                    results[index] = Self.statementResult(result)
                } else if status != PGRES_PIPELINE_ABORTED {
                    var error = Self.error(of: result, handle)
                    // A table altered under a prepared statement: prepared afresh next time, and
                    // the pipeline's transaction (an implicit one at least) may succeed if run again.
                    if case .server(sqlState: "0A000", _) = error, preparedEarlier.contains(index), case .statement(let sql) = commands[index] {
                        state.statements[sql.text] = nil
                        error = .planInvalidated
                    }
                    firstError = firstError ?? error
                }
            }
        }
        let sync = try Self.nextResult(on: handle, state: &state)
        let synced = sync.map { PQresultStatus($0) == PGRES_PIPELINE_SYNC } ?? false
        PQclear(sync)
        guard synced, PQexitPipelineMode(handle.pointer) == 1 else {
            let lost = Self.lost(&state, handle)
            throw firstError ?? lost
        }
        if let firstError { throw firstError }
        let answered = results.compactMap { $0 }
        // Aborted with no error before it: not a state to answer from.
        guard answered.count == commands.count else { throw .server(sqlState: "XX000", message: "a pipelined command was aborted without an error") }
        return answered
    }

    // MARK: - Results and errors

    private static func statementResult(_ result: OpaquePointer) -> StatementResult {
        StatementResult(
            rows: rows(of: result), affectedRows: Int(String(cString: PQcmdTuples(result))) ?? 0,
            status: String(cString: PQcmdStatus(result)))
    }

    private static func check(_ result: OpaquePointer?, _ handle: ConnectionHandle) throws(DatabaseError) {
        guard let result else { throw .connectionFailed(errorMessage(handle)) }
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
            return
        default:
            throw error(of: result, handle)
        }
    }

    /// Maps the server's SQLSTATE to a typed error.
    private static func error(of result: OpaquePointer, _ handle: ConnectionHandle) -> DatabaseError {
        func field(_ code: Character) -> String? {
            PQresultErrorField(result, Int32(code.asciiValue ?? 0)).map { String(cString: $0) }
        }
        guard let sqlState = field("C"), PQstatus(handle.pointer) == CONNECTION_OK else {
            return .connectionFailed(errorMessage(handle))
        }
        let message = field("M") ?? "unknown error"
        switch sqlState {
        case "23505": return .uniqueViolation(constraint: field("n"))
        case "23503": return .foreignKeyViolation(constraint: field("n"))
        case "40001": return .serializationFailure
        case "40P01": return .deadlockDetected
        case "55P03": return .lockNotAvailable
        case "57P01", "57P02", "57P03": return .connectionFailed(message)
        case _ where sqlState.hasPrefix("08"): return .connectionFailed(message)
        // Data exceptions quote the offending input ("invalid input syntax for type uuid:
        // \"...\""), which may be a bound value: keep it out of the error.
        case _ where sqlState.hasPrefix("22"): return .server(sqlState: sqlState, message: redactingQuotes(message))
        default: return .server(sqlState: sqlState, message: message)
        }
    }

    private static func redactingQuotes(_ message: String) -> String {
        var result = ""
        var quoted = false
        for character in message {
            if character == "\"" {
                quoted.toggle()
                result.append(quoted ? "\"…" : "\"")
            } else if !quoted {
                result.append(character)
            }
        }
        return result
    }

    private static func errorMessage(_ handle: ConnectionHandle) -> String {
        let message = String(cString: PQerrorMessage(handle.pointer)).trimmingCharacters(in: .whitespacesAndNewlines)
        return message.isEmpty ? "the connection to the server was lost" : message
    }

    /// Copies a result out of libpq in one buffer; nil for a command that returns no rows.
    private static func rows(of result: OpaquePointer) -> QueryResultStorage? {
        let columnCount = PQnfields(result)
        guard columnCount > 0 else { return nil }
        let rowCount = PQntuples(result)
        let columns = (0..<columnCount).map { String(cString: PQfname(result, $0)) }
        let types = (0..<columnCount).map { PostgresType(rawValue: PQftype(result, $0)) }
        var ranges: [QueryResultStorage.ValueRange] = []
        ranges.reserveCapacity(Int(rowCount * columnCount))
        var total = 0
        for row in 0..<rowCount {
            for column in 0..<columnCount {
                if PQgetisnull(result, row, column) == 1 {
                    ranges.append(.init(start: -1, count: 0))
                } else {
                    let length = Int(PQgetlength(result, row, column))
                    ranges.append(.init(start: total, count: length))
                    total += length
                }
            }
        }
        let bytes = [UInt8](unsafeUninitializedCapacity: total) { buffer, initialized in
            var index = 0
            for row in 0..<rowCount {
                for column in 0..<columnCount {
                    let range = ranges[index]
                    index += 1
                    guard range.count > 0, let value = PQgetvalue(result, row, column) else { continue }
                    UnsafeMutableRawPointer(buffer.baseAddress! + range.start).copyMemory(from: value, byteCount: range.count)
                }
            }
            initialized = total
        }
        return QueryResultStorage(columns: columns, types: types, bytes: bytes, ranges: ranges)
    }
}

