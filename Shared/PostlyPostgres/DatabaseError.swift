/// What can go wrong talking to PostgreSQL, told apart by SQLSTATE class so callers can
/// react: retry a serialization failure, answer 409 for a unique violation, 503 for a lost
/// connection. No case ever carries a bound parameter's value.
public enum DatabaseError: Error, Equatable, Sendable {
    /// The server is unreachable, refused us, or the connection was lost before a statement's
    /// outcome was known (class 08, 57P01-03). Inside a transaction nothing was committed.
    case connectionFailed(String)
    /// `COMMIT` went out and was never answered (the connection lost, the server silent), and
    /// the server could not say afterwards what became of the transaction (`LostCommit`): it
    /// may or may not have committed, so it must not simply be run again.
    case commitOutcomeUnknown
    /// SQLSTATE 23505, with the violated constraint's name when the server gives it.
    case uniqueViolation(constraint: String?)
    /// SQLSTATE 23503: a referenced row is missing (or still referenced).
    case foreignKeyViolation(constraint: String?)
    /// SQLSTATE 40001: the transaction may succeed if retried.
    case serializationFailure
    /// SQLSTATE 40P01: the transaction may succeed if retried.
    case deadlockDetected
    /// SQLSTATE 55P03: a lock was not granted within `lock_timeout`.
    case lockNotAvailable
    /// SQLSTATE 0A000 from a statement prepared earlier on the connection, inside a transaction:
    /// a table it reads was altered since ("cached plan must not change result type", after a
    /// newer release's migration). The statement is prepared afresh next time, so the
    /// transaction may succeed if run again. (Outside a transaction it is run again at once.)
    case planInvalidated
    /// The server sent nothing for `PostgresConfiguration.answerTimeout` (the connection was
    /// closed: a transaction on it never commits, a statement outside one may still apply), or
    /// no pooled connection came free within `leaseTimeout`.
    case timedOut(String)
    /// A parameter that cannot be sent (a NUL byte in a string); nothing was sent.
    case invalidParameter(String)
    /// Any other error the server reported.
    case server(sqlState: String, message: String)
    /// A column missing, NULL where a value was expected, or not convertible to the asked type.
    case decoding(column: String, reason: String)
    /// The pool was closed (graceful shutdown).
    case closed
}

extension DatabaseError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .connectionFailed(let detail): "connection failed: \(detail)"
        case .commitOutcomeUnknown: "the connection was lost during COMMIT; the outcome is unknown"
        case .uniqueViolation(let constraint): "unique violation (\(constraint ?? "unknown constraint"))"
        case .foreignKeyViolation(let constraint): "foreign key violation (\(constraint ?? "unknown constraint"))"
        case .serializationFailure: "serialization failure"
        case .deadlockDetected: "deadlock detected"
        case .lockNotAvailable: "lock not available"
        case .planInvalidated: "a table a prepared statement reads was altered"
        case .timedOut(let detail): "timed out: \(detail)"
        case .invalidParameter(let detail): "invalid parameter: \(detail)"
        case .server(let sqlState, let message): "server error \(sqlState): \(message)"
        case .decoding(let column, let reason): "cannot decode column \(column): \(reason)"
        case .closed: "the database pool is closed"
        }
    }
}

extension DatabaseError {
    /// Whether the same transaction may succeed if run again: the server was unreachable,
    /// the transaction lost a race (deadlock, serialization failure) and was rolled back, or
    /// a table under a prepared statement was altered.
    /// Everything else fails again, or (`commitOutcomeUnknown`, `timedOut`) must not be repeated
    /// blindly; a `timedOut` again would also double a wait already long.
    public var isTransient: Bool {
        switch self {
        case .connectionFailed, .serializationFailure, .deadlockDetected, .planInvalidated: true
        case .commitOutcomeUnknown, .timedOut, .lockNotAvailable, .uniqueViolation, .foreignKeyViolation, .invalidParameter, .server, .decoding, .closed: false
        }
    }

    /// Whether the database could not do it now, through no fault of what was asked: the
    /// transient errors (when their runs are spent), a commit whose outcome is unknown, a lock not granted in time, no answer
    /// in time, a closed pool, the server's classes 53 (out of disk, memory, connections), 57 (a
    /// statement cancelled, by `statement_timeout` among others) and 58 (its own I/O), and a
    /// write refused by a server that is now a standby (25006, during a failover). A
    /// request gets 503; a consumer tries the same event again later (its sequence check
    /// makes a second application of a committed one change nothing).
    public var isUnavailable: Bool {
        switch self {
        case .connectionFailed, .serializationFailure, .deadlockDetected, .planInvalidated, .commitOutcomeUnknown, .lockNotAvailable, .timedOut,
            .closed:
            true
        case .server(let sqlState, _): ["53", "57", "58"].contains(sqlState.prefix(2)) || sqlState == "25006"
        case .uniqueViolation, .foreignKeyViolation, .invalidParameter, .decoding: false
        }
    }

    /// Whether the schema is not what the statement expects (class 42: a table, column or
    /// function missing, a privilege not granted; 3F: a schema missing): pods of two releases
    /// side by side during a rolling update, or a release to fix. Never the data's fault.
    public var isSchemaMismatch: Bool {
        guard case .server(let sqlState, _) = self else { return false }
        return ["42", "3F"].contains(sqlState.prefix(2))
    }
}
