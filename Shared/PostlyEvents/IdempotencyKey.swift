import Foundation

/// An `Idempotency-Key` and the request it came with. Keys are per user; a retry must repeat
/// the method, the path and the body, or it is another request under a reused key.
public struct IdempotencyKey: Sendable, Hashable {
    /// How long a first answer is kept and replayed: 24 hours.
    public static let lifetime: TimeInterval = 86_400
    /// The longest key accepted.
    public static let maximumLength = 255

    public var key: String
    public var userId: String
    public var method: String
    public var path: String
    public var body: [UInt8]

    public init(key: String, userId: String, method: String, path: String, body: [UInt8]) {
        self.key = key
        self.userId = userId
        self.method = method
        self.path = path
        self.body = body
    }

    /// What a retry must repeat, hashed by the database.
    var fingerprint: [UInt8] {
        Array("\(method)\n\(path)\n\(userId)\n".utf8) + body
    }
}

/// Why an idempotent write was refused.
public enum IdempotencyError: Error, Sendable, Hashable {
    /// The key was used before with another request (422).
    case keyReused
    /// The first request with the key has not finished yet (409).
    case inProgress
}
