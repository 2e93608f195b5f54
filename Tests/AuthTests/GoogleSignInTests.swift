import AuthService
import Foundation
import HummingbirdTesting
import Testing

@Suite struct GoogleSignInTests {
    @Test func aValidIDTokenSignsInAndCreatesTheUserOnce() async throws {
        try await LocalOpenIDIssuer.run { issuer async throws in
            try await AuthTestHarness.run(google: issuer) { auth async throws in
                let subject = "google-\(UUID().uuidString)"
                let first = try await auth.loginWithGoogle(
                    try await issuer.idToken(subject: subject, email: "Grace@Example.com", picture: "https://images.example.test/g.png"))
                #expect(first.status == .ok)
                let session = try first.session()
                #expect(session.user.email == "grace@example.com")
                #expect(session.user.name == "Grace Hopper")
                #expect(session.user.profilePicture == "https://images.example.test/g.png")
                #expect(try await auth.check(session.accessToken).status == .ok)

                let second = try await auth.loginWithGoogle(try await issuer.idToken(subject: subject, email: "grace@example.com"))
                #expect(second.status == .ok)
                #expect(try second.session().user.userId == session.user.userId, "the same user")
                let users = try await auth.database.query("SELECT count(*) AS n FROM users")
                #expect(try users[0].decode("n", as: Int64.self) == 1)
                #expect(issuer.fetches.count == 1, "the issuer's keys are cached")
            }
        }
    }

    @Test func aGoogleSignInLinksTheAccountWithTheSameEmail() async throws {
        try await LocalOpenIDIssuer.run { issuer async throws in
            try await AuthTestHarness.run(google: issuer) { auth async throws in
                let registered = try await auth.registered(email: "barbara@example.com")
                let response = try await auth.loginWithGoogle(try await issuer.idToken(email: "BARBARA@example.com"))
                #expect(response.status == .ok)
                #expect(try response.session().user.userId == registered.user.userId)
                #expect(
                    try await auth.loginWithEmail("barbara@example.com", password: "correct horse").status == .ok,
                    "the password still works")
            }
        }
    }

    @Test func spoiledIDTokensAnswer401() async throws {
        try await LocalOpenIDIssuer.run { issuer async throws in
            try await AuthTestHarness.run(google: issuer) { auth async throws in
                let spoiled: [(String, String)] = [
                    ("wrong audience", try await issuer.idToken(email: "a@example.com", audience: "someone-elses-app")),
                    ("expired", try await issuer.idToken(email: "b@example.com", lifetime: -120)),
                    ("bad signature", try await issuer.idToken(email: "c@example.com", signing: .foreignKey)),
                    ("unknown kid", try await issuer.idToken(email: "d@example.com", signing: .unpublishedKeyId)),
                    ("unverified email", try await issuer.idToken(email: "e@example.com", emailVerified: false)),
                    ("wrong issuer", try await issuer.idToken(email: "f@example.com", issuer: "https://evil.example")),
                    ("garbage", "not.a.token"),
                ]
                for (name, token) in spoiled {
                    let response = try await auth.loginWithGoogle(token)
                    #expect(response.status == .unauthorized, "\(name)")
                    #expect(try response.problem().code == "unauthorized", "\(name)")
                }
                let users = try await auth.database.query("SELECT count(*) AS n FROM users")
                #expect(try users[0].decode("n", as: Int64.self) == 0)
                #expect(try await auth.post("/api/auth/login", json: "{}").status == .unprocessableContent)
            }
        }
    }

    @Test func anUnknownKidFetchesTheKeysAgain() async throws {
        try await LocalOpenIDIssuer.run { issuer async throws in
            try await AuthTestHarness.run(google: issuer, configure: { $0.google.unknownKeyRefetchInterval = .zero }) { auth async throws in
                #expect(try await auth.loginWithGoogle(try await issuer.idToken(email: "k@example.com")).status == .ok)
                #expect(issuer.fetches.count == 1)
                let unknown = try await auth.loginWithGoogle(try await issuer.idToken(email: "k@example.com", signing: .unpublishedKeyId))
                #expect(unknown.status == .unauthorized)
                #expect(issuer.fetches.count == 2, "an unknown kid refetches the key set (key rotation)")
            }
        }
    }

    @Test func noConfiguredClientIdRefusesEveryToken() async throws {
        try await LocalOpenIDIssuer.run { issuer async throws in
            try await AuthTestHarness.run(google: issuer, configure: { $0.google.clientIds = [] }) { auth async throws in
                #expect(try await auth.loginWithGoogle(try await issuer.idToken(email: "n@example.com")).status == .unauthorized)
            }
        }
    }
}
