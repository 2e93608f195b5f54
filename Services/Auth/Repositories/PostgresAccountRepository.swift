import Foundation
import PostlyEvents
import PostlyModels
import PostlyPostgres

public struct PostgresAccountRepository: AccountRepository {
    let database: Database

    public init(database: Database) {
        self.database = database
    }

    static let userColumns = "id, name, email, password_hash, profile_picture, created_at, last_login"

    public func register(name: String, email: String, passwordHash: String, session: NewSession, in transaction: WriteTransaction) async throws -> User {
        let connection = transaction.connection
        try await Self.lockAccount(email: email, in: connection)
        guard try await connection.query("SELECT 1 AS taken FROM users WHERE email = \(email)").isEmpty else {
            throw AccountError.emailTaken
        }
        let id = UUID().uuidString.lowercased()
        try await connection.execute(
            """
            INSERT INTO users (id, name, email, password_hash, last_login)
            VALUES (\(id), \(name), \(email), \(passwordHash), now())
            """)
        let user = try await Self.user(id: id, in: connection)
        try await transaction.emit(.userRegistered(UserSnapshot(user)), key: id, actorId: id)
        try await Self.insert(session, userId: id, in: connection)
        return user
    }

    public func account(email: String) async throws -> Account? {
        let rows = try await database.query("SELECT \(unescaped: Self.userColumns) FROM users WHERE email = \(email)")
        return try rows.first.map(Self.account)
    }

    public func user(id: String) async throws -> User {
        try await database.withConnection { try await Self.user(id: id, in: $0) }
    }

    public func startSession(userId: String, passwordHash: String, session: NewSession, in transaction: WriteTransaction) async throws -> User? {
        let connection = transaction.connection
        // A Google link that commits while the password is checked changes the row: the
        // update waits for it and finds the hash gone.
        let stillTheirs = try await connection.query(
            "UPDATE users SET last_login = now() WHERE id = \(userId) AND password_hash = \(passwordHash) RETURNING id")
        guard !stillTheirs.isEmpty else { return nil }
        try await Self.insert(session, userId: userId, in: connection)
        return try await Self.user(id: userId, in: connection)
    }

    public func signIn(google: GoogleIdentity, session: NewSession, in transaction: WriteTransaction) async throws -> GoogleSignIn {
        let connection = transaction.connection
        // Sign-ins of one Google account, or of one email (a registration too), take turns;
        // the subject's lock is always taken first.
        try await Self.lock("google:" + google.subject, in: connection)
        try await Self.lockAccount(email: google.email, in: connection)
        var revoked: [SessionRevocation] = []
        let userId: String
        if let row = try await connection.query(
            "SELECT \(unescaped: Self.userColumns) FROM users WHERE google_subject = \(google.subject)"
        ).first {
            let known = try Self.account(row).user
            userId = known.userId
            try await Self.recordGoogleSignIn(google, of: known, in: transaction)
        } else if let row = try await connection.query(
            "SELECT \(unescaped: Self.userColumns), google_subject FROM users WHERE email = \(google.email)"
        ).first {
            // Another Google account holds this email's account: nothing is relinked silently.
            guard row.isNull("google_subject") else { throw AccountError.accountConflict }
            let existing = try Self.account(row).user
            userId = existing.userId
            // Google proved the email; the password was never proved by anyone. It stops
            // working, and whoever signed in with it is signed out.
            try await connection.execute(
                "UPDATE users SET google_subject = \(google.subject), password_hash = NULL WHERE id = \(userId)")
            revoked = try await Self.revokeAll(userId: userId, in: transaction)
            try await Self.recordGoogleSignIn(google, of: existing, in: transaction)
        } else {
            userId = UUID().uuidString.lowercased()
            try await connection.execute(
                """
                INSERT INTO users (id, name, email, google_subject, profile_picture, last_login)
                VALUES (\(userId), \(google.name), \(google.email), \(google.subject), \(google.picture), now())
                """)
            let user = try await Self.user(id: userId, in: connection)
            try await transaction.emit(.userRegistered(UserSnapshot(user)), key: userId, actorId: userId)
        }
        try await Self.insert(session, userId: userId, in: connection)
        return GoogleSignIn(user: try await Self.user(id: userId, in: connection), revokedSessions: revoked)
    }

    /// Sets `lastLogin`, and Google's picture when the user has none yet (`user.updated`).
    static func recordGoogleSignIn(_ google: GoogleIdentity, of user: User, in transaction: WriteTransaction) async throws {
        try await transaction.connection.execute(
            """
            UPDATE users SET last_login = now(), profile_picture = COALESCE(profile_picture, \(google.picture))
            WHERE id = \(user.userId)
            """)
        if user.profilePicture == nil, let picture = google.picture {
            var updated = user
            updated.profilePicture = picture
            try await transaction.emit(.userUpdated(UserSnapshot(updated)), key: user.userId, actorId: user.userId)
        }
    }

    public func refresh(
        _ token: PresentedRefreshToken, next: RefreshTokenRecord, accessExpiresAt: Date, replayWithin grace: Duration,
        in transaction: WriteTransaction
    ) async throws -> RefreshOutcome {
        let connection = transaction.connection
        let tokenHash = token.hash
        let graceSeconds = Int(grace.components.seconds)
        // A second refresh with the token waits here for the first to commit, and then sees it spent.
        let rows = try await connection.query(
            """
            SELECT r.session_id, r.expires_at, r.spent_at, r.answer,
                r.spent_at > clock_timestamp() - \(graceSeconds) * interval '1 second' AS in_grace,
                s.user_id, s.revoked_at, s.access_expires_at
            FROM refresh_tokens r JOIN sessions s ON s.id = r.session_id
            WHERE r.token_hash = \(tokenHash)
            FOR UPDATE
            """)
        guard let row = rows.first else {
            // Spent and gone, or never issued: whoever holds the session's tokens may be a thief.
            guard let sessionId = token.sessionId,
                let session = try await connection.query("SELECT user_id FROM sessions WHERE id = \(sessionId)").first,
                let revocation = try await Self.revoke(sessionId: sessionId, userId: try session.decode("user_id"), in: transaction)
            else { return .invalid }
            return .reused(revocation)
        }
        let sessionId: String = try row.decode("session_id")
        let userId: String = try row.decode("user_id")
        guard row.isNull("revoked_at") else { return .invalid }
        // Within the grace, every use (a retry, a second tab, a third) gets the first answer again.
        if try row.decode("in_grace", as: Bool?.self) == true, let answer = try row.decode("answer", as: [UInt8]?.self) {
            return .replayed(sealedAnswer: answer)
        }
        if !row.isNull("spent_at") {
            // A spent token came back: whoever holds the session's tokens may be a thief.
            guard let revocation = try await Self.revoke(sessionId: sessionId, userId: userId, in: transaction) else {
                return .invalid
            }
            return .reused(revocation)
        }
        guard try row.decode("expires_at", as: Date.self) > Date() else { return .invalid }
        // A token that names its session needs no row once spent past the grace: the session
        // keeps its live token and those spent within the grace, however often it refreshes.
        // One presented at this moment holds its row (skipped): waiting for it deadlocked.
        try await connection.execute(
            """
            DELETE FROM refresh_tokens WHERE token_hash IN (
                SELECT token_hash FROM refresh_tokens
                WHERE session_id = \(sessionId) AND names_session AND spent_at < clock_timestamp() - \(graceSeconds) * interval '1 second'
                FOR UPDATE SKIP LOCKED)
            """)
        // The clock, not the transaction's start: the grace is measured from the moment it was spent.
        try await connection.execute("UPDATE refresh_tokens SET spent_at = clock_timestamp() WHERE token_hash = \(tokenHash)")
        try await Self.insert(next, of: sessionId, in: connection)
        try await connection.execute(
            """
            UPDATE sessions SET access_expires_at = GREATEST(access_expires_at, \(accessExpiresAt))
            WHERE id = \(sessionId)
            """)
        return .rotated(user: try await Self.user(id: userId, in: connection), sessionId: sessionId)
    }

    /// Deletes what no request can use any more: refresh tokens past their expiry or of a
    /// revoked session, the answers kept of tokens spent before the replay grace, and sessions
    /// whose every access token has expired and that have no refresh token left. A spent
    /// token of the earlier form (naming no session) stays until it expires: presented again,
    /// it reveals a theft. One that names its session goes at the session's next refresh.
    public func purgeExpiredSessions(replayGrace grace: Duration) async throws {
        try await database.retryingTransaction { connection in
            try await connection.execute(
                """
                DELETE FROM refresh_tokens r USING sessions s
                WHERE s.id = r.session_id AND (r.expires_at < now() OR s.revoked_at IS NOT NULL)
                """)
            try await connection.execute(
                """
                UPDATE refresh_tokens SET answer = NULL
                WHERE answer IS NOT NULL AND spent_at < now() - \(Int(grace.components.seconds)) * interval '1 second'
                """)
            try await connection.execute(
                """
                DELETE FROM sessions s
                WHERE s.access_expires_at < now() AND NOT EXISTS (SELECT 1 FROM refresh_tokens r WHERE r.session_id = s.id)
                """)
        }
    }

    public func keepAnswer(_ sealedAnswer: [UInt8], ofSpent tokenHash: [UInt8], in transaction: WriteTransaction) async throws {
        try await transaction.connection.execute("UPDATE refresh_tokens SET answer = \(sealedAnswer) WHERE token_hash = \(tokenHash)")
    }

    public func revokeSession(id: String, userId: String, in transaction: WriteTransaction) async throws -> SessionRevocation? {
        try await Self.revoke(sessionId: id, userId: userId, in: transaction)
    }

    public func isActive(sessionId: String) async throws -> Bool {
        let rows = try await database.query("SELECT 1 AS one FROM sessions WHERE id = \(sessionId) AND revoked_at IS NULL")
        return !rows.isEmpty
    }

    public func replacePasswordHash(userId: String, current: String, with new: String, in transaction: WriteTransaction) async throws -> String? {
        let connection = transaction.connection
        let replaced = try await connection.query(
            "UPDATE users SET password_hash = \(new) WHERE id = \(userId) AND password_hash = \(current) RETURNING id")
        if !replaced.isEmpty { return new }
        // Another write committed first (the update waited for it): what it stored.
        let rows = try await connection.query("SELECT password_hash FROM users WHERE id = \(userId)")
        return try rows.first?.decode("password_hash", as: String?.self)
    }

    public func importUser(_ user: ImportedUser, in transaction: WriteTransaction) async throws -> ImportResult {
        let connection = transaction.connection
        // Taken in the order sign-ins take them, so an import and a sign-in never deadlock.
        if let subject = user.googleSubject { try await Self.lock("google:" + subject, in: connection) }
        try await Self.lockAccount(email: user.email, in: connection)
        let inserted = try await connection.query(
            """
            INSERT INTO users (id, name, email, password_hash, google_subject, profile_picture, created_at, last_login)
            VALUES (\(user.userId), \(user.name), \(user.email), \(user.passwordHash), \(user.googleSubject), \(user.profilePicture),
                    \(user.createdAt), \(user.lastLogin))
            ON CONFLICT DO NOTHING RETURNING id
            """)
        guard inserted.isEmpty else {
            try await transaction.emit(
                .userRegistered(UserSnapshot(userId: user.userId, name: user.name, profilePicture: user.profilePicture)),
                key: user.userId, actorId: user.userId, imported: true)
            return .created
        }
        if try await !connection.query("SELECT 1 AS taken FROM users WHERE id = \(user.userId)").isEmpty { return .existing }
        if try await !connection.query("SELECT 1 AS taken FROM users WHERE email = \(user.email)").isEmpty {
            return .rejected(reason: "another user holds this email")
        }
        return .rejected(reason: "another user holds this Google account")
    }

    // MARK: - In a transaction

    static func user(id: String, in connection: DatabaseConnection) async throws -> User {
        let rows = try await connection.query("SELECT \(unescaped: userColumns) FROM users WHERE id = \(id)")
        guard let row = rows.first else { throw AccountError.accountGone }
        return try account(row).user
    }

    static func account(_ row: Row) throws -> Account {
        Account(
            user: User(
                userId: try row.decode("id"), name: try row.decode("name"), email: try row.decode("email"),
                profilePicture: try row.decode("profile_picture"), createdAt: try row.decode("created_at"),
                lastLogin: try row.decode("last_login")),
            passwordHash: try row.decode("password_hash"))
    }

    static func insert(_ session: NewSession, userId: String, in connection: DatabaseConnection) async throws {
        try await connection.execute(
            "INSERT INTO sessions (id, user_id, access_expires_at) VALUES (\(session.id), \(userId), \(session.accessExpiresAt))")
        try await insert(session.refreshToken, of: session.id, in: connection)
    }

    /// A refresh token of the session, which names it.
    static func insert(_ token: RefreshTokenRecord, of sessionId: String, in connection: DatabaseConnection) async throws {
        let hash = RefreshToken.hash(RefreshToken.token(session: sessionId, secret: token.secret))
        try await connection.execute(
            """
            INSERT INTO refresh_tokens (token_hash, session_id, expires_at, names_session)
            VALUES (\(hash), \(sessionId), \(token.expiresAt), true)
            """)
    }

    /// Marks the session revoked and writes `session.revoked`; nil when it was revoked
    /// already or is not the user's.
    static func revoke(sessionId: String, userId: String, in transaction: WriteTransaction) async throws -> SessionRevocation? {
        let rows = try await transaction.connection.query(
            """
            UPDATE sessions SET revoked_at = now()
            WHERE id = \(sessionId) AND user_id = \(userId) AND revoked_at IS NULL
            RETURNING access_expires_at
            """)
        guard let row = rows.first else { return nil }
        let revocation = SessionRevocation(sessionId: sessionId, userId: userId, expiresAt: try row.decode("access_expires_at"))
        try await transaction.emit(.sessionRevoked(revocation), key: userId, actorId: userId)
        return revocation
    }

    /// Revokes every open session of the user, each with its `session.revoked`.
    static func revokeAll(userId: String, in transaction: WriteTransaction) async throws -> [SessionRevocation] {
        let rows = try await transaction.connection.query(
            """
            UPDATE sessions SET revoked_at = now() WHERE user_id = \(userId) AND revoked_at IS NULL
            RETURNING id, access_expires_at
            """)
        var revoked: [SessionRevocation] = []
        for row in rows {
            let revocation = SessionRevocation(sessionId: try row.decode("id"), userId: userId, expiresAt: try row.decode("access_expires_at"))
            try await transaction.emit(.sessionRevoked(revocation), key: userId, actorId: userId)
            revoked.append(revocation)
        }
        return revoked
    }

    /// Serializes the transactions that create or link the account of one email.
    static func lockAccount(email: String, in connection: DatabaseConnection) async throws {
        try await lock("account:" + email, in: connection)
    }

    /// A lock on `name` until the transaction ends.
    static func lock(_ name: String, in connection: DatabaseConnection) async throws {
        try await connection.execute("SELECT pg_advisory_xact_lock(hashtextextended(\(name), 0))")
    }
}

extension UserSnapshot {
    init(_ user: User) {
        self.init(userId: user.userId, name: user.name, profilePicture: user.profilePicture)
    }
}
