/// A user as embedded anywhere public: never carries the email.
public struct Author: Codable, Sendable, Hashable {
    public var userId: String
    public var name: String
    public var profilePicture: String?

    public init(userId: String, name: String, profilePicture: String? = nil) {
        self.userId = userId
        self.name = name
        self.profilePicture = profilePicture
    }

    // `profilePicture` is written as `null` when absent: the app's decoder wants every key.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(userId, forKey: .userId)
        try container.encode(name, forKey: .name)
        try container.encode(profilePicture, forKey: .profilePicture)
    }
}

extension Author: JSONWritable {
    /// The keys of `encode(to:)`, sorted.
    public func write(to json: inout JSONWriter) {
        json.object { json in
            json.field("name", name)
            json.field("profilePicture", profilePicture)
            json.field("userId", userId)
        }
    }
}
