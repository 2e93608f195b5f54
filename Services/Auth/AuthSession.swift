import Hummingbird
import PostlyModels

/// The answer of register, both logins and refresh: `{accessToken, refreshToken, user}`,
/// plus `tokenType` and `expiresIn` (seconds) for clients that want them.
public struct AuthSession: Codable, Sendable, ResponseEncodable {
    public var accessToken: String
    public var refreshToken: String
    public var tokenType: String
    public var expiresIn: Int
    public var user: User

    public init(accessToken: String, refreshToken: String, expiresIn: Int, user: User) {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.tokenType = "Bearer"
        self.expiresIn = expiresIn
        self.user = user
    }
}
