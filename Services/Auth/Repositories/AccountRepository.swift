import Foundation
import PostlyEvents
import PostlyModels

/// What the accounts storage refuses, in the domain's words; the controllers map them to
/// problem documents.
public enum AccountError: Error, Sendable, Hashable {
    /// An account with this email exists already.
    case emailTaken
    /// The account a token or session names no longer exists.
    case accountGone
    /// The email's account is linked to another Google account.
    case accountConflict
}

/// A user with what only the auth service sees of it.
public struct Account: Sendable, Hashable {
    public var user: User
    /// bcrypt, or an imported Werkzeug hash until its first login; nil for an account that only
    /// ever signed in with Google.
    public var passwordHash: String?
}

/// What Google vouches for in a verified ID token.
public struct GoogleIdentity: Sendable, Hashable {
    public var subject: String
    public var email: String
    public var name: String
    public var picture: String?
}

/// What a Google sign-in did: whose session it started, and the sessions it ended (linking an
/// account signs out whoever held its password).
public struct GoogleSignIn: Sendable {
    public var user: User
    public var revokedSessions: [SessionRevocation]
}

/// A new refresh token: its secret, which the session it is stored for names (the token is
/// `RefreshToken.token(session:secret:)`, stored only as its hash).
public struct RefreshTokenRecord: Sendable {
    public var secret: String
    public var expiresAt: Date
}

/// A refresh token as presented: the session it names, if it names one, and its hash.
public struct PresentedRefreshToken: Sendable {
    public var sessionId: String?
    public var hash: [UInt8]
}

/// What presenting a refresh token did.
public enum RefreshOutcome: Sendable {
    /// The token was good and is now spent; the new one is stored.
    case rotated(user: User, sessionId: String)
    /// The token was spent moments ago and asks once more: the answer kept then (`keepAnswer`).
    case replayed(sealedAnswer: [UInt8])
    /// The token was spent already (or names a live session and is not its own): it was stolen
    /// or replayed, so its session was revoked.
    case reused(SessionRevocation)
    /// Unknown, expired, or of a revoked session.
    case invalid
}

/// Where users, sessions and refresh tokens live. Reads take the database; every write runs
/// inside the service's write unit (`WriteTransaction`), so a change that other services must
/// hear of commits with its event.
public protocol AccountRepository: Sendable {
    /// A new email-password account and its first session. Throws `emailTaken`.
    func register(name: String, email: String, passwordHash: String, session: NewSession, in transaction: WriteTransaction) async throws -> User
    /// The account with that (normalized) email, if any.
    func account(email: String) async throws -> Account?
    /// The user by id; `accountGone` when the user no longer exists.
    func user(id: String) async throws -> User
    /// Starts a session for a user who just proved their password, and sets `lastLogin`, if
    /// `passwordHash` (what the password was checked against) is still theirs; nil when not.
    func startSession(userId: String, passwordHash: String, session: NewSession, in transaction: WriteTransaction) async throws -> User?
    /// Finds the Google account's user (by subject; else links the account with the same
    /// email, whose password then stops working and whose sessions are revoked; else creates
    /// one) and starts a session. Throws `accountConflict` when the email's account is linked
    /// to another Google subject.
    func signIn(google: GoogleIdentity, session: NewSession, in transaction: WriteTransaction) async throws -> GoogleSignIn
    /// Spends a refresh token and stores its successor. A token spent less than `replayWithin`
    /// ago answers the answer kept with it; any other spent token revokes its session, and so
    /// does an unknown one that names a live session (its row goes once it is spent past
    /// `replayWithin`).
    func refresh(
        _ token: PresentedRefreshToken, next: RefreshTokenRecord, accessExpiresAt: Date, replayWithin grace: Duration,
        in transaction: WriteTransaction
    ) async throws -> RefreshOutcome
    /// Keeps the (sealed) answer of the refresh that spent the token, for its replay.
    func keepAnswer(_ sealedAnswer: [UInt8], ofSpent tokenHash: [UInt8], in transaction: WriteTransaction) async throws
    /// Revokes the session; nil when it was revoked already (or is not the user's).
    func revokeSession(id: String, userId: String, in transaction: WriteTransaction) async throws -> SessionRevocation?
    /// Whether the session exists and is not revoked.
    func isActive(sessionId: String) async throws -> Bool
    /// Replaces the password hash of the user after a login with a legacy (Werkzeug) hash, if it
    /// is still `current`: the next login checks the new one. Returns the user's hash after:
    /// `new`, or what another write stored first (nil: none, a Google sign-in took the account).
    func replacePasswordHash(userId: String, current: String, with new: String, in transaction: WriteTransaction) async throws -> String?
    /// Inserts the user with `user.registered` (imported) unless one with its id exists; rejected
    /// when another user holds its email or Google account.
    func importUser(_ user: ImportedUser, in transaction: WriteTransaction) async throws -> ImportResult
}

/// What starting a session stores.
public struct NewSession: Sendable {
    public var id: String
    public var refreshToken: RefreshTokenRecord
    public var accessExpiresAt: Date
}

/// A user brought in from an earlier deployment (`POST /internal/import/users`), as the
/// importer normalized it. `passwordHash` is kept as that deployment stored it (Werkzeug's
/// scrypt or pbkdf2, or bcrypt); `PasswordHasher` verifies it and the first login replaces it.
public struct ImportedUser: Codable, Sendable, Hashable {
    public var userId: String
    public var name: String
    public var email: String
    public var passwordHash: String?
    public var googleSubject: String?
    public var profilePicture: String?
    public var createdAt: Date
    public var lastLogin: Date?
}
