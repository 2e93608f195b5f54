/// The bodies of the services' import routes (`POST /internal/import/...`), as the
/// specification's table gives them. Dates are already the contract's text (UTC, ms).
public enum ImportRecords {
    public struct User: Codable, Equatable, Sendable {
        public var userId: String
        public var name: String
        public var email: String
        public var passwordHash: String?
        public var googleSubject: String?
        public var profilePicture: String?
        public var createdAt: String
        public var lastLogin: String?
    }

    public struct Author: Codable, Equatable, Sendable {
        public var userId: String
        public var name: String
        public var profilePicture: String?
    }

    public struct Post: Codable, Equatable, Sendable {
        public var _id: String
        public var title: String
        public var content: String
        public var status: String
        public var slug: String
        public var coverImage: String?
        public var author: Author
        public var createdAt: String
        public var updatedAt: String
        public var publishedAt: String?
        public var views: Int64
    }

    public struct Alias: Codable, Equatable, Sendable {
        public var from: String
        public var to: String
    }

    public struct Comment: Codable, Equatable, Sendable {
        public var _id: String
        public var postId: String
        public var content: String
        public var author: Author
        public var createdAt: String
    }

    public struct Like: Codable, Equatable, Sendable {
        public var postId: String
        public var userId: String
        public var createdAt: String
    }

    /// What every route answers: 200 `{created, existing, rejected: [{id, reason}]}`.
    public struct Answer: Codable, Equatable, Sendable {
        public struct Rejection: Codable, Equatable, Sendable {
            public var id: String
            public var reason: String

            public init(id: String, reason: String) { (self.id, self.reason) = (id, reason) }
        }
        public var created: Int
        public var existing: Int
        public var rejected: [Rejection]

        public init(created: Int, existing: Int, rejected: [Rejection]) {
            (self.created, self.existing, self.rejected) = (created, existing, rejected)
        }
    }
}
