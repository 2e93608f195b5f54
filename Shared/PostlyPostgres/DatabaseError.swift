/// What can go wrong talking to PostgreSQL, told apart so callers can react: retry a
/// serialization failure, answer 409 for a unique violation, 503 for a lost connection.
/// No case ever carries a bound parameter's value.
public enum DatabaseError: Error, Equatable, Sendable {
    /// The server is unreachable, refused us, or the connection was lost mid-query.
    case connectionFailed(String)
    /// SQLSTATE 23505, with the violated constraint's name when the server gives it.
    case uniqueViolation(constraint: String?)
    /// SQLSTATE 40001: the transaction may succeed if retried.
    case serializationFailure
    /// SQLSTATE 40P01: the transaction may succeed if retried.
    case deadlockDetected
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
        case .uniqueViolation(let constraint): "unique violation (\(constraint ?? "unknown constraint"))"
        case .serializationFailure: "serialization failure"
        case .deadlockDetected: "deadlock detected"
        case .invalidParameter(let detail): "invalid parameter: \(detail)"
        case .server(let sqlState, let message): "server error \(sqlState): \(message)"
        case .decoding(let column, let reason): "cannot decode column \(column): \(reason)"
        case .closed: "the database pool is closed"
        }
    }
}

extension DatabaseError {
    /// Whether the same statement may succeed if tried again later: the server was
    /// unreachable, or the transaction lost a race. Everything else fails again.
    public var isTransient: Bool {
        switch self {
        case .connectionFailed, .serializationFailure, .deadlockDetected: true
        case .uniqueViolation, .invalidParameter, .server, .decoding, .closed: false
        }
    }
}
