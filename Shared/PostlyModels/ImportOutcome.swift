/// The answer of an import route (`POST /internal/import/...`): how many documents of the batch
/// were created, how many were there already (imported before, or written since: never
/// touched), and the ones refused, each with why.
public struct ImportOutcome: Codable, Sendable, Hashable {
    public struct Rejection: Codable, Sendable, Hashable {
        public var id: String
        public var reason: String

        public init(id: String, reason: String) {
            self.id = id
            self.reason = reason
        }
    }

    public var created: Int
    public var existing: Int
    public var rejected: [Rejection]

    public init(created: Int = 0, existing: Int = 0, rejected: [Rejection] = []) {
        self.created = created
        self.existing = existing
        self.rejected = rejected
    }

    public mutating func reject(_ id: String, _ reason: String) {
        rejected.append(Rejection(id: id, reason: reason))
    }

    /// How an answer names a like, which has no id of its own.
    public static func likeId(postId: String, userId: String) -> String { "\(postId) \(userId)" }

    /// Counts what importing the document `id` did.
    public mutating func count(_ result: ImportResult, id: String) {
        switch result {
        case .created: created += 1
        case .existing: existing += 1
        case .rejected(let reason): reject(id, reason)
        }
    }
}

/// What importing one document did.
public enum ImportResult: Sendable, Hashable {
    case created
    /// A document with its id is there already (imported before, or edited or deleted since): left as it is.
    case existing
    case rejected(reason: String)
}
