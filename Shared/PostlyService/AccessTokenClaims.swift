import Foundation
import JWTKit

/// The claims of a Postly access token, signed by the auth service and verified by
/// every service with the auth service's public keys.
public struct AccessTokenClaims: JWTPayload, Equatable {
    /// The `aud` of every access token, which every service checks: a token the same issuer
    /// signed for something else is no access token.
    public static let audience = "postly"

    /// The user id.
    public var sub: SubjectClaim
    /// The session id; logout revokes it everywhere.
    public var sid: String
    public var iat: IssuedAtClaim
    public var exp: ExpirationClaim
    public var iss: IssuerClaim
    public var aud: AudienceClaim
    /// The user's display name when the token was issued.
    public var name: String

    public init(
        userId: String, sessionId: String, name: String, issuer: String, issuedAt: Date, expiresAt: Date, audience: String = Self.audience
    ) {
        self.sub = SubjectClaim(value: userId)
        self.sid = sessionId
        self.iat = IssuedAtClaim(value: issuedAt)
        self.exp = ExpirationClaim(value: expiresAt)
        self.iss = IssuerClaim(value: issuer)
        self.aud = AudienceClaim(value: audience)
        self.name = name
    }

    public func verify(using algorithm: some JWTAlgorithm) async throws {
        try verifyStillValid()
    }

    /// What a token whose signature was checked before must still satisfy each time it is used.
    func verifyStillValid() throws {
        try exp.verifyNotExpired()
        try aud.verifyIntendedAudience(includes: Self.audience)
    }
}

/// Who is calling, from a verified access token.
public struct Identity: Sendable, Hashable {
    public var userId: String
    public var sessionId: String
    public var name: String
    public var expiresAt: Date

    public init(userId: String, sessionId: String, name: String, expiresAt: Date) {
        self.userId = userId
        self.sessionId = sessionId
        self.name = name
        self.expiresAt = expiresAt
    }
}
