import Foundation
import PostlyModels

/// A user with what only the auth service sees of it.
public struct Account: Sendable, Hashable {
    public var user: User
    /// bcrypt; nil for an account that only ever signed in with Google.
    public var passwordHash: String?
}

/// What Google vouches for in a verified ID token.
public struct GoogleIdentity: Sendable, Hashable {
    public var subject: String
    public var email: String
    public var name: String
    public var picture: String?
}

/// A new session's refresh token, stored only as its hash.
public struct RefreshTokenRecord: Sendable {
    public var hash: [UInt8]
    public var expiresAt: Date
}

/// What presenting a refresh token did.
public enum RefreshOutcome: Sendable {
    /// The token was good and is now spent; the new one is stored.
    case rotated(user: User, sessionId: String)
    /// The token was spent already: it was stolen or replayed, so its session was revoked.
    case reused(SessionRevocation)
    /// Unknown, expired, or of a revoked session.
    case invalid
}

/// Where users, sessions and refresh tokens live. Every change that other services must
/// hear of writes its event to the outbox in the same transaction.
public protocol AccountRepository: Sendable {
    /// A new email-password account and its first session. Throws 409 when the email is taken.
    func register(name: String, email: String, passwordHash: String, session: NewSession) async throws -> User
    /// The account with that (normalized) email, if any.
    func account(email: String) async throws -> Account?
    /// The user by id; 401 when the user no longer exists.
    func user(id: String) async throws -> User
    /// Starts a session for a user who just proved who they are, and sets `lastLogin`.
    func startSession(userId: String, session: NewSession) async throws -> User
    /// Finds the Google account's user (by subject, else links the user with the same
    /// email, else creates one) and starts a session.
    func signIn(google: GoogleIdentity, session: NewSession) async throws -> User
    /// Spends a refresh token and stores its successor.
    func refresh(tokenHash: [UInt8], next: RefreshTokenRecord, accessExpiresAt: Date) async throws -> RefreshOutcome
    /// Revokes the session; nil when it was revoked already (or is not the user's).
    func revokeSession(id: String, userId: String) async throws -> SessionRevocation?
    /// Whether the session exists and is not revoked.
    func isActive(sessionId: String) async throws -> Bool
}

/// What starting a session stores.
public struct NewSession: Sendable {
    public var id: String
    public var refreshToken: RefreshTokenRecord
    public var accessExpiresAt: Date
}
