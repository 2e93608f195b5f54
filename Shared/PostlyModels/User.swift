import Foundation

/// A user as seen by itself.
public struct User: Codable, Sendable, Hashable {
    public var userId: String
    public var name: String
    public var email: String
    public var profilePicture: String?
    public var createdAt: Date
    public var lastLogin: Date?

    public init(userId: String, name: String, email: String, profilePicture: String? = nil, createdAt: Date, lastLogin: Date? = nil) {
        self.userId = userId
        self.name = name
        self.email = email
        self.profilePicture = profilePicture
        self.createdAt = createdAt
        self.lastLogin = lastLogin
    }

    public var author: Author { Author(userId: userId, name: name, profilePicture: profilePicture) }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(userId, forKey: .userId)
        try container.encode(name, forKey: .name)
        try container.encode(email, forKey: .email)
        try container.encode(profilePicture, forKey: .profilePicture)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(lastLogin, forKey: .lastLogin)
    }
}
