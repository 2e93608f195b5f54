import CryptoExtras
import ExtrasBase64
import Foundation
import Hummingbird
import JWTKit
import Logging
import Synchronization
import TestSupport

/// A stand-in for Google in tests: an RSA key generated here, its JWKS served by a
/// Hummingbird server on 127.0.0.1 (a port the system picks), and ID tokens signed with it.
struct LocalOpenIDIssuer: Sendable {
    static let issuer = "https://accounts.local.test"
    static let clientId = "postly-ios.apps.local.test"

    let jwksURL: String
    let keyId: String
    let keys: JWTKeyCollection
    /// Signs with another RSA key under the published `kid`: a forged signature.
    let foreignKeys: JWTKeyCollection
    /// How often the JWKS was fetched.
    let fetches: Counter

    final class Counter: Sendable {
        private let value = Mutex(0)
        func increment() { value.withLock { $0 += 1 } }
        var count: Int { value.withLock { $0 } }
    }

    /// Claims of an ID token as Google writes them.
    struct IDToken: JWTPayload {
        var iss: String
        var aud: String
        var sub: String
        var email: String
        var email_verified: Bool
        var name: String?
        var picture: String?
        var iat: Int
        var exp: Int

        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    /// An RSA key of its own, and a JWKS with it (as `kid`).
    static func makeKey() throws -> (JWTKit.Insecure.RSA.PrivateKey, jwk: [String: String]) {
        let backing = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let key = try JWTKit.Insecure.RSA.PrivateKey(backing: backing)
        let primitives = try key.publicKey.getKeyPrimitives()
        return (key, ["kty": "RSA", "alg": "RS256", "use": "sig", "n": base64URL(primitives.modulus), "e": base64URL(primitives.publicExponent)])
    }

    static func base64URL(_ data: Data) -> String {
        String(base64Encoding: data, options: [.base64UrlAlphabet, .omitPaddingCharacter])
    }

    /// Runs the issuer for the duration of `body`.
    static func run<T: Sendable>(_ body: @Sendable (LocalOpenIDIssuer) async throws -> T) async throws -> T {
        let (key, jwk) = try makeKey()
        let keyId = "local-\(UUID().uuidString.prefix(8))"
        var published = jwk
        published["kid"] = keyId
        let jwks = String(decoding: try JSONSerialization.data(withJSONObject: ["keys": [published]]), as: UTF8.self)
        let keys = JWTKeyCollection()
        await keys.add(rsa: key, digestAlgorithm: .sha256, kid: JWKIdentifier(string: keyId))
        // The same key under a kid the JWKS does not publish.
        await keys.add(rsa: key, digestAlgorithm: .sha256, kid: JWKIdentifier(string: Self.unpublishedKeyId))
        let foreignKeys = JWTKeyCollection()
        await foreignKeys.add(rsa: try makeKey().0, digestAlgorithm: .sha256, kid: JWKIdentifier(string: keyId))
        let fetches = Counter()

        let router = Router()
        router.get("certs") { _, _ -> Response in
            fetches.increment()
            return Response(
                status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: jwks)))
        }
        return try await withLoopbackServer(router) { baseURL in
            let issuer = LocalOpenIDIssuer(
                jwksURL: "\(baseURL)/certs", keyId: keyId, keys: keys, foreignKeys: foreignKeys, fetches: fetches)
            return try await body(issuer)
        }
    }


    static let unpublishedKeyId = "unpublished"

    enum Signing {
        case published, unpublishedKeyId, foreignKey
    }

    /// A signed ID token; every claim can be spoiled for the attack tests.
    func idToken(
        subject: String = UUID().uuidString, email: String, emailVerified: Bool = true, name: String? = "Grace Hopper",
        picture: String? = nil, audience: String = Self.clientId, issuer: String = Self.issuer, lifetime: TimeInterval = 600,
        signing: Signing = .published
    ) async throws -> String {
        let now = Int(Date().timeIntervalSince1970)
        let claims = IDToken(
            iss: issuer, aud: audience, sub: subject, email: email, email_verified: emailVerified, name: name, picture: picture,
            iat: now - 60, exp: now + Int(lifetime))
        switch signing {
        case .published: return try await keys.sign(claims, kid: JWKIdentifier(string: keyId))
        case .unpublishedKeyId: return try await keys.sign(claims, kid: JWKIdentifier(string: Self.unpublishedKeyId))
        case .foreignKey: return try await foreignKeys.sign(claims, kid: JWKIdentifier(string: keyId))
        }
    }
}
