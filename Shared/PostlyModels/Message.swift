/// `{"message": "..."}`: the answer of deletes, likes and logouts (never an empty 204).
public struct Message: Codable, Sendable, Hashable {
    public var message: String

    public init(_ message: String) {
        self.message = message
    }
}
