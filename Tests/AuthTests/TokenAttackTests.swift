import AuthService
import Crypto
import ExtrasBase64
import Foundation
import JWTKit
import PostlyService
import Testing

/// Tokens that must never pass `/api/auth/check`.
@Suite struct TokenAttackTests {
    static func base64URL(_ data: some DataProtocol) -> String {
        String(base64Encoding: Array(data), options: [.base64UrlAlphabet, .omitPaddingCharacter])
    }

    static func base64URL(json: [String: Any]) -> String {
        base64URL(try! JSONSerialization.data(withJSONObject: json))
    }

    @Test func forgedTokensAnswer401() async throws {
        try await AuthTestHarness.run { auth async throws in
            let session = try await auth.registered()
            let kid = try #require(AuthContractTests.header(of: session.accessToken)["kid"] as? String)
            let claims = try AuthContractTests.claims(of: session.accessToken)
            let payload = Self.base64URL(json: claims)

            // alg none, no signature.
            let none = Self.base64URL(json: ["alg": "none", "typ": "JWT", "kid": kid]) + "." + payload + "."

            // HS256 keyed with the public key (the classic algorithm-confusion attack), in both
            // forms a careless verifier might use: the raw key and the JWKS document.
            let jwksText = String(buffer: try await auth.get("/api/auth/jwks").body)
            let jwks = try #require(JSONSerialization.jsonObject(with: Data(jwksText.utf8)) as? [String: Any])
            let x = try #require((jwks["keys"] as? [[String: Any]])?.first?["x"] as? String)
            var hmacForged: [String] = []
            for secret in [Data(x.utf8), Data(jwksText.utf8)] {
                let signingInput = Self.base64URL(json: ["alg": "HS256", "typ": "JWT", "kid": kid]) + "." + payload
                let mac = HMAC<SHA256>.authenticationCode(for: Data(signingInput.utf8), using: SymmetricKey(data: secret))
                hmacForged.append(signingInput + "." + Self.base64URL(Data(mac)))
            }

            // Another Ed25519 key, under the real kid.
            let otherKeys = JWTKeyCollection()
            await otherKeys.add(eddsa: try EdDSA.PrivateKey(), kid: JWKIdentifier(string: kid))
            let otherKey = try await otherKeys.sign(
                AccessTokenClaims(
                    userId: session.user.userId, sessionId: claims["sid"] as! String, name: "Mallory", issuer: "postly-auth",
                    issuedAt: Date(), expiresAt: Date().addingTimeInterval(3600)),
                kid: JWKIdentifier(string: kid))

            // The real signature over a changed payload.
            var changed = claims
            changed["name"] = "Mallory"
            let parts = session.accessToken.split(separator: ".")
            let tampered = "\(parts[0]).\(Self.base64URL(json: changed)).\(parts[2])"

            let attacks = [none] + hmacForged + [otherKey, tampered, "garbage", "a.b.c", "", session.accessToken + "x"]
            for attack in attacks {
                let response = try await auth.check(attack)
                #expect(response.status == .unauthorized, "\(attack)")
            }
            #expect(try await auth.check(session.accessToken).status == .ok, "the genuine token still works")
        }
    }

    /// Signed with the service's own key (read from its database), but expired or from
    /// another issuer.
    @Test func expiredOrForeignIssuerTokensAnswer401() async throws {
        try await AuthTestHarness.run { auth async throws in
            let session = try await auth.registered()
            let row = try #require(try await auth.database.query("SELECT kid, private_key FROM signing_keys").first)
            let kid: String = try row.decode("kid")
            let privateKey = try EdDSA.PrivateKey(
                backing: Curve25519.Signing.PrivateKey(rawRepresentation: try row.decode("private_key", as: [UInt8].self)))
            let keys = JWTKeyCollection()
            await keys.add(eddsa: privateKey, kid: JWKIdentifier(string: kid))
            let sid = try #require(AuthContractTests.claims(of: session.accessToken)["sid"] as? String)
            func token(issuer: String, expiresIn lifetime: TimeInterval) async throws -> String {
                try await keys.sign(
                    AccessTokenClaims(
                        userId: session.user.userId, sessionId: sid, name: "Ada", issuer: issuer,
                        issuedAt: Date().addingTimeInterval(-7200), expiresAt: Date().addingTimeInterval(lifetime)),
                    kid: JWKIdentifier(string: kid))
            }
            #expect(try await auth.check(try await token(issuer: "postly-auth", expiresIn: 3600)).status == .ok, "the key is the real one")
            #expect(try await auth.check(try await token(issuer: "postly-auth", expiresIn: -60)).status == .unauthorized)
            #expect(try await auth.check(try await token(issuer: "someone-else", expiresIn: 3600)).status == .unauthorized)
        }
    }
}
