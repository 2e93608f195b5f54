import ExtrasBase64
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import JWTKit
import Logging
import PostlyService
import Synchronization
import Testing
import TestSupport

/// A token is accepted only when the auth service's current keys signed it, it is
/// unexpired, from the right issuer, and its session is not revoked.
@Suite struct AccessTokenTests {
    func status(_ token: String, in app: TestApplication) async throws -> HTTPResponse.Status {
        let result = Mutex<HTTPResponse.Status>(.ok)
        try await app.test { client in
            try await client.execute(uri: "/api/me", method: .get, headers: [.authorization: "Bearer \(token)"]) { response in
                result.withLock { $0 = response.status }
                if response.status == .unauthorized {
                    #expect(response.problem?.code == "unauthorized")
                }
            }
        }
        return result.withLock { $0 }
    }

    static func base64URL(_ text: String) -> String {
        String(base64Encoding: Array(text.utf8), options: [.base64UrlAlphabet, .omitPaddingCharacter])
    }

    @Test func validTokenIdentifiesTheCaller() async throws {
        let app = try await TestApplication()
        let token = try await app.issuer.token(userId: "user-1")
        try await app.test { client in
            try await client.execute(uri: "/api/me", method: .get, headers: [.authorization: "Bearer \(token)"]) { response in
                #expect(response.status == .ok)
                #expect(String(buffer: response.body) == #"{"title":"user-1"}"#)
            }
        }
    }

    @Test func routeThatNeedsACallerAnswers401WithoutToken() async throws {
        try await TestApplication().test { client in
            try await client.execute(uri: "/api/me", method: .get) { response in
                #expect(response.status == .unauthorized)
                #expect(response.headers[.contentType] == "application/problem+json")
            }
        }
    }

    @Test func expiredTokenIsRefused() async throws {
        let app = try await TestApplication()
        #expect(try await status(app.issuer.token(lifetime: -5), in: app) == .unauthorized)
    }

    @Test func tokenFromAnotherIssuerIsRefused() async throws {
        let app = try await TestApplication()
        #expect(try await status(app.issuer.token(issuer: "someone-else"), in: app) == .unauthorized)
    }

    /// A token of the right issuer and key, but for another audience or for none.
    @Test func tokenForAnotherAudienceOrForNoneIsRefused() async throws {
        struct WithoutAudience: JWTPayload {
            var sub: SubjectClaim, sid: String, iat: IssuedAtClaim, exp: ExpirationClaim, iss: IssuerClaim, name: String
            func verify(using algorithm: some JWTAlgorithm) async throws {}
        }
        let app = try await TestApplication()
        #expect(try await status(app.issuer.token(), in: app) == .ok)
        #expect(try await status(app.issuer.token(audience: "another-app"), in: app) == .unauthorized)
        let unaddressed = try await app.issuer.sign(
            WithoutAudience(
                sub: .init(value: "user-1"), sid: "s", iat: .init(value: Date()), exp: .init(value: Date().addingTimeInterval(600)),
                iss: .init(value: "postly-auth"), name: "A"))
        #expect(try await status(unaddressed, in: app) == .unauthorized)
    }

    /// Only EdDSA, the algorithm the auth service signs with: an ES256 token is refused even
    /// when the key set carries its key.
    @Test func onlyEdDSATokensAreAccepted() async throws {
        let issuer = try await TestTokenIssuer()
        let ecdsa = ES256PrivateKey()
        let parameters = try #require(ecdsa.publicKey.parameters)
        var jwks = try JSONDecoder().decode(JWKS.self, from: Data(issuer.jwks.utf8))
        jwks.keys.append(.ecdsa(.es256, identifier: JWKIdentifier(string: "ec"), x: parameters.x, y: parameters.y, curve: .p256))
        let published = String(decoding: try JSONEncoder().encode(jwks), as: UTF8.self)
        let app = try await TestApplication(issuer: issuer, fetchJWKS: { published })
        let keys = JWTKeyCollection()
        await keys.add(ecdsa: ecdsa, kid: JWKIdentifier(string: "ec"))
        let es256 = try await keys.sign(
            AccessTokenClaims(userId: "u", sessionId: "s", name: "A", issuer: "postly-auth", issuedAt: Date(), expiresAt: Date().addingTimeInterval(600)),
            kid: JWKIdentifier(string: "ec"))
        #expect(try await status(issuer.token(), in: app) == .ok)
        #expect(try await status(es256, in: app) == .unauthorized)
    }

    @Test func tokenSignedByAnotherKeyWithTheSameKidIsRefused() async throws {
        let app = try await TestApplication()
        let impostor = try await TestTokenIssuer(keyId: app.issuer.keyId)
        #expect(try await status(impostor.token(), in: app) == .unauthorized)
    }

    @Test func tokenSignedByAnUnknownKeyIsRefused() async throws {
        let app = try await TestApplication()
        #expect(try await status(TestTokenIssuer().token(), in: app) == .unauthorized)
    }

    @Test func algNoneIsRefused() async throws {
        let app = try await TestApplication()
        let valid = try await app.issuer.token()
        let payload = valid.split(separator: ".")[1]
        let header = Self.base64URL(#"{"alg":"none","typ":"JWT","kid":"\#(app.issuer.keyId)"}"#)
        #expect(try await status("\(header).\(payload).", in: app) == .unauthorized)
        let headerWithoutKid = Self.base64URL(#"{"alg":"none","typ":"JWT"}"#)
        #expect(try await status("\(headerWithoutKid).\(payload).", in: app) == .unauthorized)
    }

    @Test func hs256SignedWithThePublicKeyIsRefused() async throws {
        let app = try await TestApplication()
        let jwks = try JSONDecoder().decode(JWKS.self, from: Data(app.issuer.jwks.utf8))
        let publicKey = try #require(jwks.keys.first?.x)
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: publicKey), digestAlgorithm: .sha256, kid: JWKIdentifier(string: app.issuer.keyId))
        let claims = AccessTokenClaims(
            userId: "attacker", sessionId: "s", name: "A", issuer: "postly-auth", issuedAt: Date(),
            expiresAt: Date().addingTimeInterval(600))
        let forged = try await keys.sign(claims, kid: JWKIdentifier(string: app.issuer.keyId))
        #expect(try await status(forged, in: app) == .unauthorized)
    }

    @Test func tamperedPayloadIsRefused() async throws {
        let app = try await TestApplication()
        let parts = try await app.issuer.token(userId: "user-1").split(separator: ".")
        let payload = Self.base64URL(
            #"{"sub":"admin","sid":"s","iat":1800000000,"exp":4102444800,"iss":"postly-auth","name":"Admin"}"#)
        #expect(try await status("\(parts[0]).\(payload).\(parts[2])", in: app) == .unauthorized)
    }

    @Test(arguments: ["garbage", "a.b.c", "", "....", "eyJhbGciOiJFZERTQSJ9.e30.AAAA"])
    func garbageIsRefused(token: String) async throws {
        #expect(try await status(token, in: TestApplication()) == .unauthorized)
    }

    @Test func nonBearerAuthorizationIsRefused() async throws {
        try await TestApplication().test { client in
            try await client.execute(uri: "/api/me", method: .get, headers: [.authorization: "Basic dXNlcjpwYXNz"]) { response in
                #expect(response.status == .unauthorized)
            }
        }
    }

    @Test func revokedSessionIsRefused() async throws {
        let app = try await TestApplication()
        let token = try await app.issuer.token(sessionId: "session-1")
        #expect(try await status(token, in: app) == .ok)
        app.kit.denyList.revoke(sessionId: "session-1", until: Date().addingTimeInterval(3600))
        #expect(try await status(token, in: app) == .unauthorized)
    }

    /// A token accepted once is not taken on trust afterwards: when it expires, it is refused.
    @Test func aTokenAcceptedBeforeIsRefusedOnceItExpires() async throws {
        let app = try await TestApplication()
        let token = try await app.issuer.token(lifetime: 3)
        #expect(try await status(token, in: app) == .ok)
        try await Task.sleep(for: .seconds(4.2))
        #expect(try await status(token, in: app) == .unauthorized)
    }

    /// Nor when the key it was checked with is replaced by another under the same kid.
    @Test func aTokenAcceptedBeforeIsRefusedOnceItsKeyIsReplaced() async throws {
        let old = try await TestTokenIssuer(keyId: "k")
        let new = try await TestTokenIssuer(keyId: "k")
        let published = Mutex(old.jwks)
        let verifier = AccessTokenVerifier(
            configuration: .init(unknownKeyRefetchInterval: .zero), denyList: SessionDenyList(), logger: Logger(label: "test")
        ) { published.withLock { $0 } }
        let token = try await old.token()
        _ = try await verifier.verify(token)
        _ = try await verifier.verify(token)
        published.withLock { $0 = new.jwks }
        try await verifier.refresh()
        await #expect(throws: APIError.self) { try await verifier.verify(token) }
        _ = try await verifier.verify(new.token())
    }

    @Test func aRotatedKeyIsFetchedWhenATokenNamesIt() async throws {
        let old = try await TestTokenIssuer(keyId: "old")
        let new = try await TestTokenIssuer(keyId: "new")
        let published = Mutex(old.jwks)
        let fetches = Mutex(0)
        let verifier = AccessTokenVerifier(
            configuration: .init(unknownKeyRefetchInterval: .zero), denyList: SessionDenyList(), logger: Logger(label: "test")
        ) {
            fetches.withLock { $0 += 1 }
            return published.withLock { $0 }
        }
        _ = try await verifier.verify(old.token())
        await #expect(throws: APIError.self) { try await verifier.verify(new.token()) }
        published.withLock { $0 = new.jwks }
        _ = try await verifier.verify(new.token(userId: "u2"))
        #expect(fetches.withLock { $0 } == 3)
    }

    @Test func unknownKeysDoNotMakeEveryRequestRefetch() async throws {
        let issuer = try await TestTokenIssuer()
        let fetches = Mutex(0)
        let verifier = AccessTokenVerifier(
            configuration: .init(unknownKeyRefetchInterval: .seconds(60)), denyList: SessionDenyList(), logger: Logger(label: "test")
        ) {
            fetches.withLock { $0 += 1 }
            return issuer.jwks
        }
        let stranger = try await TestTokenIssuer()
        for _ in 0..<20 {
            await #expect(throws: APIError.self) { try await verifier.verify(stranger.token()) }
        }
        #expect(fetches.withLock { $0 } == 1)
    }

    @Test func concurrentRequestsWithAnUnknownKidWaitForTheOneFetchInFlight() async throws {
        let issuer = try await TestTokenIssuer()
        let fetches = Mutex(0)
        let verifier = AccessTokenVerifier(
            configuration: .init(unknownKeyRefetchInterval: .zero), denyList: SessionDenyList(), logger: Logger(label: "test")
        ) {
            fetches.withLock { $0 += 1 }
            try await Task.sleep(for: .milliseconds(300))
            return issuer.jwks
        }
        let token = try await issuer.token()
        let verified = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<20 { group.addTask { try await verifier.verify(token).userId } }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(verified.count == 20)
        #expect(fetches.withLock { $0 } == 1)
    }

    /// The earlier backend's clients send their token on every request and cannot refresh
    /// it: an expired, revoked or forged one must not break the public reads.
    @Test func aTokenThatDoesNotVerifyReadsPublicRoutesAsAnonymous() async throws {
        let app = try await TestApplication()
        for token in [try await app.issuer.token(lifetime: -5), try await app.issuer.token(issuer: "someone-else"), "garbage"] {
            try await app.test { client in
                try await client.execute(uri: "/api/page", method: .get, headers: [.authorization: "Bearer \(token)"]) { response in
                    #expect(response.status == .ok && String(buffer: response.body) == #"{"title":"1/10/0"}"#)
                }
                try await client.execute(uri: "/api/me", method: .get, headers: [.authorization: "Bearer \(token)"]) { response in
                    #expect(response.status == .unauthorized && response.problem?.detail != "Authentication required", "the refusal names why")
                }
            }
        }
        struct Unreachable: Error {}
        let unreachable = try await TestApplication(fetchJWKS: { throw Unreachable() })
        let token = try await unreachable.issuer.token()
        try await unreachable.test { client in
            try await client.execute(uri: "/api/page", method: .get, headers: [.authorization: "Bearer \(token)"]) { #expect($0.status == .ok) }
        }
    }

    @Test func keysThatCannotBeFetchedAnswer503Not401() async throws {
        struct Unreachable: Error {}
        let app = try await TestApplication(fetchJWKS: { throw Unreachable() })
        let token = try await app.issuer.token()
        try await app.test { client in
            try await client.execute(uri: "/api/me", method: .get, headers: [.authorization: "Bearer \(token)"]) { response in
                #expect(response.status == .serviceUnavailable)
                #expect(response.headers[.retryAfter] != nil)
                #expect(response.problem?.code == "unavailable")
            }
        }
    }

    @Test func anUnknownKidWhileTheKeysCannotBeFetchedIs503UntilTheyCanBe() async throws {
        let issuer = try await TestTokenIssuer()
        let reachable = Mutex(false)
        let verifier = AccessTokenVerifier(
            configuration: .init(unknownKeyRefetchInterval: .zero), denyList: SessionDenyList(), logger: Logger(label: "test")
        ) {
            struct Unreachable: Error {}
            guard reachable.withLock({ $0 }) else { throw Unreachable() }
            return issuer.jwks
        }
        let token = try await issuer.token()
        await #expect { try await verifier.verify(token) } throws: { ($0 as? APIError)?.status == .serviceUnavailable }
        reachable.withLock { $0 = true }
        #expect(try await verifier.verify(token).userId.isEmpty == false)
    }
}
