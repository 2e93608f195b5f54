import ExtrasBase64
import Foundation
import JWTKit
import PostlyService

/// Signs access tokens the way the auth service does (Ed25519 with a `kid`) and publishes
/// the matching key set, so services can be tested without the auth service.
public struct TestTokenIssuer: Sendable {
    public let keyId: String
    public let issuer: String
    let privateKey: EdDSA.PrivateKey
    let keys: JWTKeyCollection

    public init(keyId: String = "test-\(UUID().uuidString.prefix(8))", issuer: String = "postly-auth") async throws {
        self.keyId = keyId
        self.issuer = issuer
        self.privateKey = try EdDSA.PrivateKey()
        self.keys = JWTKeyCollection()
        await keys.add(eddsa: privateKey, kid: JWKIdentifier(string: keyId))
    }

    /// The public key set as `/api/auth/jwks` serves it.
    public var jwks: String {
        let x = String(base64Encoding: privateKey.publicKey.rawRepresentation, options: [.base64UrlAlphabet, .omitPaddingCharacter])
        let jwk = JWK.octetKeyPair(.eddsa, identifier: JWKIdentifier(string: keyId), x: x, y: nil, curve: .ed25519)
        let data = try! JSONEncoder().encode(JWKS(keys: [jwk]))
        return String(decoding: data, as: UTF8.self)
    }

    /// A signed access token; `lifetime` may be negative for an expired one.
    public func token(
        userId: String = UUID().uuidString.lowercased(), sessionId: String = UUID().uuidString.lowercased(),
        name: String = "Test User", lifetime: TimeInterval = 3600, issuer: String? = nil, audience: String = AccessTokenClaims.audience
    ) async throws -> String {
        let now = Date()
        let claims = AccessTokenClaims(
            userId: userId, sessionId: sessionId, name: name, issuer: issuer ?? self.issuer,
            issuedAt: now.addingTimeInterval(min(0, lifetime) - 60), expiresAt: now.addingTimeInterval(lifetime), audience: audience)
        return try await sign(claims)
    }

    /// Any payload, signed with the issuer's key and `kid` (for tokens shaped wrongly on purpose).
    public func sign(_ payload: some JWTPayload) async throws -> String {
        try await keys.sign(payload, kid: JWKIdentifier(string: keyId))
    }
}
