/// Why a run stops before it is done, with the exit code the specification gives it.
public enum ImportFailure: Error, Equatable, CustomStringConvertible {
    /// Exit 2: a missing file, a BSON dump, too many bad lines, a state file of other input.
    case badInput(String)
    /// Exit 3: a service unreachable, or refusing the token, after every retry. Resumable.
    case serviceUnavailable(String)

    public var exitCode: Int32 {
        switch self {
        case .badInput: 2
        case .serviceUnavailable: 3
        }
    }

    public var description: String {
        switch self {
        case .badInput(let message), .serviceUnavailable(let message): "postly-import: \(message)"
        }
    }
}
