import Crypto
import ExtrasBase64
import Foundation
import JWTKit
import PostlyService
import Synchronization

/// Signs access tokens with the service's current Ed25519 key and publishes the public
/// keys (`/api/auth/jwks`). The keys live in the auth database: the first start generates
/// one, every instance loads the same ones. Older keys stay published while tokens signed
/// with them may still be valid, so a key can be rotated without logging anyone out.
public final class AccessTokenSigner: Sendable {
    struct Keys: Sendable {
        var collection: JWTKeyCollection
        var currentKid: String
        var jwks: String
    }

    private let repository: any SigningKeyRepository
    private let issuer: String
    private let lifetime: TimeInterval
    private let keys = Mutex<Keys?>(nil)

    public init(repository: any SigningKeyRepository, issuer: String, lifetime: TimeInterval) {
        self.repository = repository
        self.issuer = issuer
        self.lifetime = lifetime
    }

    /// Loads the keys from the database, generating the first one if there is none.
    public func load() async throws {
        let stored = try await repository.activeKeys(publishedFor: lifetime) {
            Array(Curve25519.Signing.PrivateKey().rawRepresentation)
        }
        guard let current = stored.first(where: { $0.retiredAt == nil }) else {
            throw APIError.unavailable("No token-signing key")
        }
        let collection = JWTKeyCollection()
        var published: [JWK] = []
        for key in stored {
            let privateKey = EdDSA.PrivateKey(backing: try Curve25519.Signing.PrivateKey(rawRepresentation: key.privateKey))
            await collection.add(eddsa: privateKey, kid: JWKIdentifier(string: key.kid))
            published.append(
                JWK.octetKeyPair(
                    .eddsa, identifier: JWKIdentifier(string: key.kid),
                    x: String(base64Encoding: privateKey.publicKey.rawRepresentation, options: [.base64UrlAlphabet, .omitPaddingCharacter]), y: nil, curve: .ed25519))
        }
        let jwks = String(decoding: try JSONEncoder().encode(JWKS(keys: published)), as: UTF8.self)
        keys.withLock { $0 = Keys(collection: collection, currentKid: current.kid, jwks: jwks) }
    }

    private func loaded() async throws -> Keys {
        if let keys = keys.withLock({ $0 }) { return keys }
        try await load()
        guard let keys = keys.withLock({ $0 }) else { throw APIError.unavailable("No token-signing key") }
        return keys
    }

    /// The public keys as a JSON Web Key Set.
    public func jwks() async throws -> String {
        try await loaded().jwks
    }

    /// A signed access token for the user's session, and when it expires. The name is cut
    /// to the API's limit: an imported name may be longer, and a token must fit a header.
    public func accessToken(userId: String, sessionId: String, name: String, now: Date = Date()) async throws -> (token: String, expiresAt: Date) {
        let keys = try await loaded()
        let expiresAt = now.addingTimeInterval(lifetime)
        let claims = AccessTokenClaims(
            userId: userId, sessionId: sessionId, name: AuthValidation.nameLimit.truncated(name), issuer: issuer, issuedAt: now, expiresAt: expiresAt)
        let token = try await keys.collection.sign(claims, kid: JWKIdentifier(string: keys.currentKid))
        return (token, expiresAt)
    }
}
