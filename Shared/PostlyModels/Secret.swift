/// A value that must reach neither a log nor an answer: a password, an API key, a token.
/// Printed, interpolated or dumped, it shows `<redacted>`, and so does any configuration that
/// holds one, however it is printed. Only `value` reveals it, where it is used.
public struct Secret: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public let value: String

    public init(_ value: String) {
        self.value = value
    }

    public var description: String { "<redacted>" }
    public var debugDescription: String { "<redacted>" }
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}
