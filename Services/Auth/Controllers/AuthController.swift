import Foundation
import HTTPTypes
import Hummingbird
import PostlyEvents
import PostlyModels
import PostlyService

/// The routes under `/api/auth`: accounts, sign-in with email or Google, refresh, logout,
/// the caller's user, and the public keys that verify access tokens.
struct AuthController {
    let accounts: any AccountRepository
    let writes: WriteUnit
    let signer: AccessTokenSigner
    let passwords: PasswordHasher
    let rateLimiter: LoginRateLimiter
    let google: GoogleIDTokenVerifier
    let denyList: SessionDenyList
    let accessTokenLifetime: TimeInterval
    let refreshTokenLifetime: TimeInterval
    /// How long a spent refresh token answers its new pair once more.
    let refreshReplayGrace: Duration

    func addRoutes(to router: Router<PostlyRequestContext>) {
        let auth = router.group("api/auth")
        auth.post("register", use: register)
        auth.post("login/email", use: loginWithEmail)
        auth.post("login", use: loginWithGoogle)
        auth.post("refresh", use: refresh)
        auth.get("jwks", use: jwks)
        let session = router.authenticated("api/auth")
        session.post("logout", use: logout)
        session.get("check", use: check)
    }

    static let invalidCredentials = "Invalid email or password"

    @Sendable func register(_ request: Request, context: PostlyRequestContext) async throws -> EditedResponse<AuthSession> {
        let body = try await request.decodeJSON(as: RegisterRequest.self, context: context)
        let fields = try AuthValidation.validateRegistration(name: body.name, email: body.email, password: body.password)
        let passwordHash = try await passwords.hash(fields.password)
        let session = try await startSession { new in
            try await writes.write {
                try await accounts.register(name: fields.name, email: fields.email, passwordHash: passwordHash, session: new, in: $0)
            }
        }
        return EditedResponse(status: .created, headers: [.location: "/api/auth/check"], response: session)
    }

    @Sendable func loginWithEmail(_ request: Request, context: PostlyRequestContext) async throws -> AuthSession {
        let body = try await request.decodeJSON(as: EmailLoginRequest.self, context: context)
        var errors: [String: String] = [:]
        if (body.email ?? "").isEmpty { errors["email"] = "must not be empty" }
        if AuthValidation.hasInvisibleCharacters(body.email ?? "") { errors["email"] = AuthValidation.invisibleCharacters }
        if (body.password ?? "").isEmpty { errors["password"] = "must not be empty" }
        if body.password?.contains("\u{0}") == true { errors["password"] = TextLimit.nulCharacters }
        guard errors.isEmpty, let password = body.password else { throw APIError.invalidFields(errors) }
        let email = EmailAddress.normalized(body.email ?? "")
        // Charged as a failure before the hash is checked, forgiven when the password was right.
        let charge = try await rateLimiter.charge(email: email, client: Self.clientAddress(of: request, context: context))
        let account: Account?
        let matches: Bool
        do {
            account = try await accounts.account(email: email)
            // An unknown email is checked against a dummy hash: same answer, same time.
            matches = try await passwords.verify(password, against: account?.passwordHash)
        } catch {
            try? await rateLimiter.refund(charge)
            throw error
        }
        guard matches, let account, let checked = account.passwordHash else { throw APIError.unauthorized(Self.invalidCredentials) }
        try await rateLimiter.forgive(charge)
        // An imported or older hash is replaced by one of ours in the login's own write.
        var rehash: String?
        if passwords.needsRehash(checked) {
            rehash = try await passwords.hash(password)
        }
        return try await startSession { new in
            try await writes.write { transaction in
                var hash = checked
                if let rehash {
                    let stored = try await accounts.replacePasswordHash(userId: account.user.userId, current: checked, with: rehash, in: transaction)
                    hash = stored ?? checked
                    // Another login of this user checked the imported hash too, and replaced it
                    // first: the password is right if it is right for theirs.
                    if let stored, stored != rehash, try await !passwords.verify(password, against: stored) {
                        throw APIError.unauthorized(Self.invalidCredentials)
                    }
                }
                // Nil when the password stopped being the account's during the check (a Google
                // sign-in took the account over).
                guard let user = try await accounts.startSession(userId: account.user.userId, passwordHash: hash, session: new, in: transaction) else {
                    throw APIError.unauthorized(Self.invalidCredentials)
                }
                return user
            }
        }
    }

    @Sendable func loginWithGoogle(_ request: Request, context: PostlyRequestContext) async throws -> AuthSession {
        let body = try await request.decodeJSON(as: GoogleLoginRequest.self, context: context)
        guard let token = body.token, !token.isEmpty else { throw APIError.invalidFields(["token": "must not be empty"]) }
        let identity = try await google.verify(token)
        var revoked: [SessionRevocation] = []
        let session = try await startSession { new in
            let signedIn = try await writes.write { try await accounts.signIn(google: identity, session: new, in: $0) }
            revoked = signedIn.revokedSessions
            return signedIn.user
        }
        // Refused here at once; the other services hear of it through `session.revoked`.
        for revocation in revoked { denyList.revoke(sessionId: revocation.sessionId, until: revocation.expiresAt) }
        return session
    }

    @Sendable func refresh(_ request: Request, context: PostlyRequestContext) async throws -> AuthSession {
        let body = try await request.decodeJSON(as: RefreshRequest.self, context: context)
        guard let presented = body.refreshToken, !presented.isEmpty else {
            throw APIError.invalidFields(["refreshToken": "must not be empty"])
        }
        let now = Date()
        let nextSecret = RefreshToken.secret()
        let next = RefreshTokenRecord(secret: nextSecret, expiresAt: now.addingTimeInterval(refreshTokenLifetime))
        let accessExpiresAt = now.addingTimeInterval(accessTokenLifetime)
        let token = RefreshToken.presented(presented)
        enum Answer { case session(AuthSession), reused(SessionRevocation), invalid }
        let answer = try await writes.write { transaction -> Answer in
            switch try await accounts.refresh(
                token, next: next, accessExpiresAt: accessExpiresAt, replayWithin: refreshReplayGrace, in: transaction)
            {
            case .rotated(let user, let sessionId):
                // Signed and kept before the commit: a second refresh with the token waits for it.
                let access = try await signer.accessToken(userId: user.userId, sessionId: sessionId, name: user.name, now: now)
                let session = AuthSession(
                    accessToken: access.token, refreshToken: RefreshToken.token(session: sessionId, secret: nextSecret),
                    expiresIn: Int(accessTokenLifetime), user: user)
                try await accounts.keepAnswer(try RefreshReplay.seal(session, with: presented), ofSpent: token.hash, in: transaction)
                return .session(session)
            case .replayed(let sealed):
                return .session(try RefreshReplay.open(sealed, with: presented))
            case .reused(let revocation):
                return .reused(revocation)
            case .invalid:
                return .invalid
            }
        }
        switch answer {
        case .session(let session):
            return session
        case .reused(let revocation):
            denyList.revoke(sessionId: revocation.sessionId, until: revocation.expiresAt)
            context.logger.notice("a spent refresh token was presented again; its session is revoked", metadata: ["sessionId": "\(revocation.sessionId)"])
            throw APIError.unauthorized("Invalid refresh token")
        case .invalid:
            throw APIError.unauthorized("Invalid refresh token")
        }
    }

    @Sendable func logout(_ request: Request, context: AuthenticatedRequestContext) async throws -> Message {
        let identity = context.identity
        let revocation = try await writes.write {
            try await accounts.revokeSession(id: identity.sessionId, userId: identity.userId, in: $0)
        }
        // Refused here at once; the other services hear of it through `session.revoked`.
        denyList.revoke(sessionId: identity.sessionId, until: max(revocation?.expiresAt ?? identity.expiresAt, identity.expiresAt))
        return Message("Logged out")
    }

    @Sendable func check(_ request: Request, context: AuthenticatedRequestContext) async throws -> User {
        let identity = context.identity
        // Another instance may have revoked the session before its event reached this one.
        guard try await accounts.isActive(sessionId: identity.sessionId) else {
            denyList.revoke(sessionId: identity.sessionId, until: identity.expiresAt)
            throw APIError.unauthorized("The session has ended")
        }
        return try await accounts.user(id: identity.userId)
    }

    @Sendable func jwks(_ request: Request, context: PostlyRequestContext) async throws -> Response {
        let jwks = try await signer.jwks()
        return Response(
            status: .ok,
            headers: [.contentType: "application/json; charset=utf-8", .cacheControl: "public, max-age=300"],
            body: .init(byteBuffer: ByteBuffer(string: jwks)))
    }

    /// Creates the session with `start`, then signs its first access token.
    private func startSession(_ start: (NewSession) async throws -> User) async throws -> AuthSession {
        let now = Date()
        let sessionId = UUID().uuidString.lowercased()
        let secret = RefreshToken.secret()
        let session = NewSession(
            id: sessionId,
            refreshToken: RefreshTokenRecord(secret: secret, expiresAt: now.addingTimeInterval(refreshTokenLifetime)),
            accessExpiresAt: now.addingTimeInterval(accessTokenLifetime))
        let user = try await start(session)
        let access = try await signer.accessToken(userId: user.userId, sessionId: sessionId, name: user.name, now: now)
        return AuthSession(
            accessToken: access.token, refreshToken: RefreshToken.token(session: sessionId, secret: secret),
            expiresIn: Int(accessTokenLifetime), user: user)
    }

    /// The client for limits per address: the hop our gateway appended to `X-Forwarded-For`
    /// (its last entry; earlier ones are whatever the client claimed), else the peer.
    static func clientAddress(of request: Request, context: PostlyRequestContext) -> String {
        if let forwarded = request.headers[.forwardedFor],
            let hop = forwarded.split(separator: ",").last?.trimmingCharacters(in: .whitespaces), !hop.isEmpty
        {
            return hop
        }
        return context.peerAddress ?? "unknown"
    }
}

extension HTTPField.Name {
    static let forwardedFor = Self("X-Forwarded-For")!
}
