import AuthService
import ExtrasBase64
import Foundation
import HummingbirdTesting
import JWTKit
import NIOCore
import PostlyModels
import PostlyService
import Testing

@Suite struct AuthContractTests {
    static var millisecondTimestamp: Regex<Substring> { #/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/# }

    @Test func registerAnswers201WithTokensAndTheUser() async throws {
        try await AuthTestHarness.run { auth async throws in
            let response = try await auth.register(name: "  Ada Lovelace ", email: "  Ada@Example.COM ")
            #expect(response.status == .created)
            #expect(response.headers[.location] == "/api/auth/check")
            #expect(response.headers[.contentType]?.hasPrefix("application/json") == true)
            let session = try response.session()
            #expect(session.user.name == "Ada Lovelace")
            #expect(session.user.email == "ada@example.com")
            #expect(session.user.profilePicture == nil)
            #expect(!session.accessToken.isEmpty && !session.refreshToken.isEmpty)

            let object = try response.object()
            let user = try #require(object["user"] as? [String: Any])
            #expect(Set(user.keys) == ["userId", "name", "email", "profilePicture", "createdAt", "lastLogin"])
            #expect(user["profilePicture"] is NSNull)
            #expect((user["createdAt"] as? String)?.wholeMatch(of: Self.millisecondTimestamp) != nil)
            #expect((user["lastLogin"] as? String)?.wholeMatch(of: Self.millisecondTimestamp) != nil)

            let check = try await auth.check(session.accessToken)
            #expect(check.status == .ok)
            #expect(try check.user().userId == session.user.userId)

            let stored = try await auth.database.query("SELECT password_hash, email FROM users")
            let hash: String = try stored[0].decode("password_hash")
            #expect(hash.hasPrefix("$bcrypt-sha256$$2b$04$"), "only a bcrypt hash (of the password's SHA-256) is stored")
            #expect(try stored[0].decode("email", as: String.self) == "ada@example.com")
        }
    }

    @Test func registeringAnEmailTwiceInAnotherCaseAnswers409() async throws {
        try await AuthTestHarness.run { auth async throws in
            #expect(try await auth.register(email: "grace@example.com").status == .created)
            let again = try await auth.register(name: "Someone Else", email: " GRACE@Example.com")
            #expect(again.status == .conflict)
            let problem = try again.problem()
            #expect(problem.code == "conflict" && problem.status == 409)
            #expect(again.headers[.contentType] == "application/problem+json")
        }
    }

    @Test func invalidRegistrationsAnswer422NamingTheFields() async throws {
        try await AuthTestHarness.run { auth async throws in
            let cases: [(body: [String: Any], field: String)] = [
                (["name": "Ada", "email": "not-an-email", "password": "long enough"], "email"),
                (["name": "Ada", "email": "ada@example.com", "password": "short"], "password"),
                (["name": "   ", "email": "ada@example.com", "password": "long enough"], "name"),
                (["name": "\u{200B}\u{3164}", "email": "ada@example.com", "password": "long enough"], "name"),
                (["name": String(repeating: "n", count: 101), "email": "ada@example.com", "password": "long enough"], "name"),
                (["name": "Ada\u{0}", "email": "ada@example.com", "password": "long enough"], "name"),
                // 100 characters of 100 combining marks each: 20 KB, a token too big for any gateway.
                (["name": String(repeating: "n" + String(repeating: "\u{301}", count: 100), count: 100), "email": "ada@example.com", "password": "long enough"], "name"),
                (["email": "ada@example.com", "password": "long enough"], "name"),
            ]
            for item in cases {
                let response = try await auth.post("/api/auth/register", json: AuthTestHarness.json(item.body))
                #expect(response.status == .unprocessableContent, "\(item.body)")
                let problem = try response.problem()
                #expect(problem.errors?[item.field] != nil, "\(item.field) in \(problem.errors ?? [:])")
            }
            let users = try await auth.database.query("SELECT count(*) AS n FROM users")
            #expect(try users[0].decode("n", as: Int64.self) == 0, "nothing was created")
        }
    }

    /// The name rides in every access token: the longest one allowed keeps the Authorization
    /// header far below the gateway's 8 KiB (over it, every call would answer 431).
    @Test func theLongestNameKeepsTheTokenUnderTheGatewaysHeaderLimit() async throws {
        try await AuthTestHarness.run { auth async throws in
            let session = try await auth.registered(name: String(repeating: "\u{1F600}", count: 100))
            #expect(session.user.name.count == 100)
            #expect("Authorization: Bearer \(session.accessToken)".utf8.count < 4_096)
        }
    }

    /// bcrypt stops at NUL: "\u{0}abcdefg" passed the 8-character rule and "\u{0}" then
    /// signed in. NUL is refused on both routes.
    @Test func passwordsWithNULAnswer422() async throws {
        try await AuthTestHarness.run { auth async throws in
            let register = try await auth.register(email: "nul@example.com", password: "\u{0}abcdefg")
            #expect(register.status == .unprocessableContent)
            #expect(try register.problem().errors?["password"] != nil)
            let login = try await auth.loginWithEmail("nul@example.com", password: "\u{0}")
            #expect(login.status == .unprocessableContent)
            let users = try await auth.database.query("SELECT count(*) AS n FROM users")
            #expect(try users[0].decode("n", as: Int64.self) == 0)
        }
    }

    /// Composed and decomposed accents, full-width letters and another case are one address.
    @Test func lookAlikeEmailsAreOneAccount() async throws {
        try await AuthTestHarness.run { auth async throws in
            let composed = try await auth.registered(email: "Jos\u{E9}@example.com")
            #expect(composed.user.email == "jos\u{E9}@example.com")
            for lookAlike in ["Jose\u{301}@example.com", "\u{FF2A}os\u{E9}@example.com", "JOS\u{C9}@EXAMPLE.COM"] {
                #expect(try await auth.register(email: lookAlike).status == .conflict, "\(lookAlike.unicodeScalars.map(\.value))")
            }
            #expect(try await auth.loginWithEmail("jose\u{301}@example.com", password: "correct horse").status == .ok)
            let users = try await auth.database.query("SELECT count(*) AS n FROM users")
            #expect(try users[0].decode("n", as: Int64.self) == 1)
        }
    }

    @Test func invisibleAndBidiCharactersInEmailsAnswer422() async throws {
        try await AuthTestHarness.run { auth async throws in
            for email in ["ada\u{200B}@example.com", "ada@exa\u{202E}elpmax.com", "\u{FEFF}ada@example.com", "ada\u{2066}@example.com", "a\u{AD}da@example.com"] {
                let response = try await auth.register(email: email)
                #expect(response.status == .unprocessableContent, "\(email.unicodeScalars.map(\.value))")
                #expect(try response.problem().errors?["email"] != nil)
                #expect(try await auth.loginWithEmail(email, password: "correct horse").status == .unprocessableContent)
            }
            let users = try await auth.database.query("SELECT count(*) AS n FROM users")
            #expect(try users[0].decode("n", as: Int64.self) == 0)
        }
    }

    /// An address is counted in bytes: one "character" of thousands of combining marks made
    /// the unique index refuse the row, and the registration answered 500.
    @Test func anEmailOfManyCombiningMarksAnswers422() async throws {
        try await AuthTestHarness.run { auth async throws in
            let marks = (0..<3_000).map { Character(UnicodeScalar(0x300 + $0 % 0x4F)!) }
            let response = try await auth.register(email: "a" + String(marks) + "@example.com")
            #expect(response.status == .unprocessableContent)
            #expect(try response.problem().errors?["email"] != nil)
            #expect(try await auth.register(email: String(repeating: "\u{E9}", count: 32) + "@example.com").status == .created)
        }
    }

    @Test func malformedBodiesAnswer400And415() async throws {
        try await AuthTestHarness.run { auth async throws in
            #expect(try await auth.post("/api/auth/register", json: "{\"name\": ").status == .badRequest)
            #expect(try await auth.post("/api/auth/login/email", json: "{\"email\": 5, \"password\": \"x\"}").status == .unprocessableContent)
            let plain = try await auth.client.execute(
                uri: "/api/auth/login/email", method: .post, headers: [.contentType: "text/plain"], body: ByteBuffer(string: "hi"))
            #expect(plain.status == .unsupportedMediaType)
        }
    }

    @Test func emailLoginIsCaseInsensitiveAndStartsANewSession() async throws {
        try await AuthTestHarness.run { auth async throws in
            let registered = try await auth.registered(email: "linus@example.com", password: "hunter2hunter2")
            let response = try await auth.loginWithEmail(" LINUS@example.com ", password: "hunter2hunter2")
            #expect(response.status == .ok)
            let session = try response.session()
            #expect(session.user.userId == registered.user.userId)
            #expect(session.user.lastLogin != nil)
            #expect(try Self.claims(of: session.accessToken)["sid"] as? String != Self.claims(of: registered.accessToken)["sid"] as? String)
            #expect(try await auth.check(session.accessToken).status == .ok)
            #expect(try await auth.check(registered.accessToken).status == .ok, "the first session lives on")
        }
    }

    @Test func unknownEmailAndWrongPasswordAnswerTheSame401() async throws {
        try await AuthTestHarness.run(configure: { $0.bcryptCost = 6 }) { auth async throws in
            _ = try await auth.registered(email: "known@example.com", password: "the right one")
            var wrongPasswordTimes: [Duration] = []
            var unknownEmailTimes: [Duration] = []
            var bodies: Set<String> = []
            for attempt in 0..<5 {
                var started = ContinuousClock.now
                let wrong = try await auth.loginWithEmail("known@example.com", password: "the wrong one \(attempt)")
                wrongPasswordTimes.append(started.duration(to: .now))
                started = ContinuousClock.now
                let unknown = try await auth.loginWithEmail("nobody\(attempt)@example.com", password: "the wrong one")
                unknownEmailTimes.append(started.duration(to: .now))
                #expect(wrong.status == .unauthorized && unknown.status == .unauthorized)
                for response in [wrong, unknown] {
                    var problem = try response.problem()
                    problem.requestId = nil
                    let encoder = JSONEncoder()
                    encoder.outputFormatting = .sortedKeys
                    bodies.insert(String(decoding: try encoder.encode(problem), as: UTF8.self))
                }
            }
            #expect(bodies.count == 1, "one body for both: \(bodies)")
            // The fastest of each: other tests running in parallel only ever add time. Without the
            // dummy hash an unknown email would answer in a millisecond instead of a bcrypt check.
            let wrongPassword = wrongPasswordTimes.min()!
            let unknownEmail = unknownEmailTimes.min()!
            #expect(unknownEmail * 3 > wrongPassword, "unknown email \(unknownEmail) vs wrong password \(wrongPassword)")
            #expect(wrongPassword * 3 > unknownEmail, "unknown email \(unknownEmail) vs wrong password \(wrongPassword)")
        }
    }

    @Test func refreshRotatesAndASpentTokenRevokesTheSession() async throws {
        try await AuthTestHarness.run(configure: { $0.refreshReplayGrace = .zero }) { auth async throws in
            let first = try await auth.registered()
            let rotated = try await auth.refresh(first.refreshToken)
            #expect(rotated.status == .ok)
            let second = try rotated.session()
            #expect(second.refreshToken != first.refreshToken)
            #expect(second.user.userId == first.user.userId)
            #expect(try Self.claims(of: second.accessToken)["sid"] as? String == Self.claims(of: first.accessToken)["sid"] as? String)
            #expect(try await auth.check(second.accessToken).status == .ok, "the new pair works")

            let replayed = try await auth.refresh(first.refreshToken)
            #expect(replayed.status == .unauthorized, "a spent refresh token answers 401")
            #expect(try await auth.check(second.accessToken).status == .unauthorized, "and the session's access tokens stop working")
            #expect(try await auth.check(first.accessToken).status == .unauthorized)
            #expect(try await auth.refresh(second.refreshToken).status == .unauthorized, "the whole session is revoked")

            let stored = try await auth.database.query("SELECT token_hash FROM refresh_tokens")
            let hashes = try stored.map { try $0.decode("token_hash", as: [UInt8].self) }
            #expect(hashes.allSatisfy { $0.count == 32 }, "stored as SHA-256 only")
        }
    }

    /// Three tabs (or retries) refresh with one token at once, and a fourth a moment later:
    /// within the grace every one gets the same new pair, and the session lives on.
    @Test func aRefreshTokenUsedAgainWithinTheGraceAnswersTheSamePairEachTime() async throws {
        try await AuthTestHarness.run { auth async throws in
            let first = try await auth.registered()
            var answers = try await withThrowingTaskGroup(of: AuthSession.self) { group in
                for _ in 0..<3 { group.addTask { try await auth.refresh(first.refreshToken).session() } }
                return try await group.reduce(into: [AuthSession]()) { $0.append($1) }
            }
            answers.append(try await auth.refresh(first.refreshToken).session())
            #expect(answers.count == 4)
            #expect(Set(answers.map(\.refreshToken)).count == 1 && Set(answers.map(\.accessToken)).count == 1)
            #expect(try await auth.check(answers[0].accessToken).status == .ok, "the session lives on")
            #expect(try await auth.refresh(answers[0].refreshToken).status == .ok, "the new refresh token works")
        }
    }

    /// A retry a moment later gets the same pair; once the grace is over the token revokes.
    @Test func aRetryWithinTheGraceGetsTheSamePairAndALaterOneRevokes() async throws {
        try await AuthTestHarness.run(configure: { $0.refreshReplayGrace = .seconds(1) }) { auth async throws in
            let first = try await auth.registered()
            let answer = try await auth.refresh(first.refreshToken).session()
            let retry = try await auth.refresh(first.refreshToken).session()
            #expect(retry.accessToken == answer.accessToken && retry.refreshToken == answer.refreshToken)

            let second = try await auth.refresh(answer.refreshToken).session()
            try await Task.sleep(for: .milliseconds(1_300))
            #expect(try await auth.refresh(answer.refreshToken).status == .unauthorized, "after the grace a reuse answers 401")
            #expect(try await auth.check(second.accessToken).status == .unauthorized, "and revokes the session")
        }
    }

    /// A client refreshing in a loop kept a row per refresh, for the tokens' 30 days. A token
    /// names its session, so its row goes once it is spent past the grace, and presenting it
    /// again still revokes the session.
    @Test func aSessionRefreshedManyTimesKeepsItsLiveTokenAndAnOldOneStillRevokes() async throws {
        try await AuthTestHarness.run(configure: { $0.refreshReplayGrace = .zero }) { auth async throws in
            let first = try await auth.registered()
            var latest = first
            for _ in 0..<20 { latest = try await auth.refresh(latest.refreshToken).session() }
            let sessionId = try #require(Self.claims(of: first.accessToken)["sid"] as? String)
            let rows = try await auth.database.query("SELECT count(*) FROM refresh_tokens WHERE session_id = \(sessionId)")
            #expect(try rows[0].decode(0, as: Int64.self) == 2, "the live token, and the one spent by the last refresh")

            #expect(try await auth.refresh(first.refreshToken).status == .unauthorized)
            #expect(try await auth.check(latest.accessToken).status == .unauthorized, "the session is revoked")
            #expect(try await auth.refresh(latest.refreshToken).status == .unauthorized)
        }
    }

    /// A token's secret alone, or under a name that is no session's, is refused and revokes
    /// nothing: the secret alone rotated the session, and its kept answer, sealed with what was
    /// presented, then failed the holder's retry with 500; a NUL in the name answered 400.
    @Test func aSecretAloneOrUnderAnotherNameIsRefusedAndRevokesNothing() async throws {
        try await AuthTestHarness.run { auth async throws in
            let ada = try await auth.registered()
            let secret = try #require(ada.refreshToken.split(separator: ".").last)
            let session = try #require(Self.claims(of: ada.accessToken)["sid"] as? String)
            for forged in [String(secret), "\(UUID().uuidString.lowercased()).\(secret)", "\u{0}.\(secret)", "\(session.uppercased()).\(secret)"] {
                #expect(try await auth.refresh(forged).status == .unauthorized, "\(forged)")
            }
            #expect(try await auth.check(ada.accessToken).status == .ok)
            #expect(try await auth.refresh(ada.refreshToken).status == .ok)
        }
    }

    /// Within the grace a spent token still answers its pair after its successor was spent in
    /// turn (a second tab, behind): its row stays for the grace.
    @Test func aTokenSpentWithinTheGraceAnswersItsPairAfterTheSessionMovedOn() async throws {
        try await AuthTestHarness.run { auth async throws in
            let first = try await auth.registered()
            let second = try await auth.refresh(first.refreshToken).session()
            let third = try await auth.refresh(second.refreshToken).session()
            let again = try await auth.refresh(first.refreshToken).session()
            #expect(again.refreshToken == second.refreshToken && again.accessToken == second.accessToken)
            #expect(try await auth.check(third.accessToken).status == .ok, "the session lives on")
        }
    }

    /// A token issued before tokens named their session (a secret alone) still rotates, and
    /// its row stays: presented again later, it revokes the session.
    @Test func aTokenOfTheEarlierFormRotatesAndStillRevokesLater() async throws {
        try await AuthTestHarness.run(configure: { $0.refreshReplayGrace = .zero }) { auth async throws in
            let ada = try await auth.registered()
            let sessionId = try #require(Self.claims(of: ada.accessToken)["sid"] as? String)
            let earlier = "an-opaque-token-of-the-earlier-form-\(UUID().uuidString)"
            try await auth.database.execute(
                """
                INSERT INTO refresh_tokens (token_hash, session_id, expires_at)
                VALUES (sha256(convert_to(\(earlier), 'UTF8')), \(sessionId), now() + interval '1 day')
                """)
            var latest = try await auth.refresh(earlier).session()
            #expect(latest.refreshToken.hasPrefix(sessionId + "."))
            for _ in 0..<3 { latest = try await auth.refresh(latest.refreshToken).session() }
            #expect(try await auth.refresh(earlier).status == .unauthorized)
            #expect(try await auth.check(latest.accessToken).status == .unauthorized, "the session is revoked")
        }
    }

    @Test func unknownOrMissingRefreshTokensAreRefused() async throws {
        try await AuthTestHarness.run { auth async throws in
            #expect(try await auth.refresh("not-a-token").status == .unauthorized)
            #expect(try await auth.post("/api/auth/refresh", json: "{}").status == .unprocessableContent)
        }
    }

    @Test func logoutRevokesTheSessionAtOnceAndOnlyThatSession() async throws {
        try await AuthTestHarness.run { auth async throws in
            let session = try await auth.registered(email: "alan@example.com")
            let other = try await auth.loginWithEmail("alan@example.com", password: "correct horse").session()
            let response = try await auth.post("/api/auth/logout", json: nil, token: session.accessToken)
            #expect(response.status == .ok)
            #expect(try response.object()["message"] is String)
            #expect(try await auth.check(session.accessToken).status == .unauthorized)
            #expect(try await auth.post("/api/auth/logout", json: nil, token: session.accessToken).status == .unauthorized)
            #expect(try await auth.refresh(session.refreshToken).status == .unauthorized, "its refresh token is dead too")
            #expect(try await auth.check(other.accessToken).status == .ok, "the user's other session lives on")
            #expect(try await auth.post("/api/auth/logout", json: nil).status == .unauthorized)
        }
    }

    @Test func checkNeedsAToken() async throws {
        try await AuthTestHarness.run { auth async throws in
            let response = try await auth.get("/api/auth/check")
            #expect(response.status == .unauthorized)
            #expect(try response.problem().code == "unauthorized")
        }
    }

    @Test func jwksPublishesTheKeyThatSignsAccessTokens() async throws {
        try await AuthTestHarness.run(configure: { $0.accessTokenLifetime = 3600 }) { auth async throws in
            let session = try await auth.registered(name: "Edsger", email: "edsger@example.com")
            let response = try await auth.get("/api/auth/jwks")
            #expect(response.status == .ok)
            let object = try response.object()
            let keys = try #require(object["keys"] as? [[String: Any]])
            #expect(keys.count == 1)
            let key = try #require(keys.first)
            #expect(key["kty"] as? String == "OKP" && key["crv"] as? String == "Ed25519" && key["alg"] as? String == "EdDSA")
            #expect(key["d"] == nil, "never the private part")
            let header = try Self.header(of: session.accessToken)
            #expect(header["alg"] as? String == "EdDSA")
            #expect(header["kid"] as? String == key["kid"] as? String)

            let collection = JWTKeyCollection()
            _ = try await collection.add(jwksJSON: String(buffer: response.body))
            let claims = try await collection.verify(session.accessToken, as: AccessTokenClaims.self)
            #expect(claims.sub.value == session.user.userId)
            #expect(claims.name == "Edsger")
            #expect(claims.iss.value == "postly-auth")
            #expect(claims.aud.value == ["postly"], "every service checks the audience")
            #expect(abs(claims.exp.value.timeIntervalSince(claims.iat.value) - 3600) < 2)

            let stored = try await auth.database.query("SELECT kid FROM signing_keys")
            #expect(try stored.map { try $0.decode("kid", as: String.self) } == [key["kid"] as? String])
        }
    }

    // MARK: - Token parts

    static func header(of token: String) throws -> [String: Any] {
        try part(0, of: token)
    }

    static func claims(of token: String) throws -> [String: Any] {
        try part(1, of: token)
    }

    static func part(_ index: Int, of token: String) throws -> [String: Any] {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        let bytes = try Base64.decode(bytes: parts[index].utf8, options: [.base64UrlAlphabet, .omitPaddingCharacter])
        return try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
    }
}
