import AuthService
import Foundation
import HummingbirdTesting
import Testing
import TestSupport

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

    /// A Google account without a name, or with one that shows nothing, is named by its
    /// email's local part, as a registration with such a name would be refused.
    @Test func aGoogleAccountWithoutAVisibleNameIsNamedByItsEmail() async throws {
        try await LocalOpenIDIssuer.run { issuer async throws in
            try await AuthTestHarness.run(google: issuer) { auth async throws in
                // As many Hangul fillers as a name may have, then a name: blank once cut.
                let invisibleFirst = String(repeating: "\u{3164}", count: 100) + "Bob"
                for (number, name) in [nil, "", "\u{200B}\u{3164}", invisibleFirst].enumerated() {
                    let answer = try await auth.loginWithGoogle(try await issuer.idToken(email: "katherine\(number)@example.com", name: name))
                    #expect(try answer.session().user.name == "katherine\(number)", "\(String(describing: name))")
                }
            }
        }
    }

    /// Someone registered the victim's address first and chose the password; the victim then
    /// signs in with Google. The account is hers from then on: the squatter's password and
    /// sessions stop working.
    @Test func linkingAnAccountEndsItsUnprovenPasswordAndItsSessions() async throws {
        try await LocalOpenIDIssuer.run { issuer async throws in
            try await AuthTestHarness.run(google: issuer) { auth async throws in
                let squatter = try await auth.registered(email: "barbara@example.com", password: "squatter's password")
                let unverified = try await auth.loginWithGoogle(try await issuer.idToken(email: "barbara@example.com", emailVerified: false))
                #expect(unverified.status == .unauthorized, "an unverified Google email links nothing")
                #expect(try await auth.loginWithEmail("barbara@example.com", password: "squatter's password").status == .ok)

                let response = try await auth.loginWithGoogle(try await issuer.idToken(email: "BARBARA@example.com"))
                #expect(response.status == .ok)
                let barbara = try response.session()
                #expect(barbara.user.userId == squatter.user.userId, "the account is linked, not duplicated")
                #expect(try await auth.loginWithEmail("barbara@example.com", password: "squatter's password").status == .unauthorized)
                #expect(try await auth.check(squatter.accessToken).status == .unauthorized, "the squatter's sessions are revoked")
                #expect(try await auth.refresh(squatter.refreshToken).status == .unauthorized)
                #expect(try await auth.check(barbara.accessToken).status == .ok, "the new session works")
                let events = try await auth.database.query("SELECT count(*) AS n FROM outbox WHERE convert_from(payload, 'UTF8') LIKE '%\"session.revoked\"%'")
                #expect(try events[0].decode("n", as: Int64.self) == 2, "every other service hears of both sessions")
            }
        }
    }

    /// A password login whose check overlaps the link: the link commits after the login read
    /// the hash, before it wrote its session. The login got a session on the account taken
    /// over (the link's revocations came before it); it answers 401 now.
    @Test func aPasswordLoginOverlappingTheLinkGetsNoSession() async throws {
        try await AuthTestHarness.run { auth async throws in
            _ = try await auth.registered(email: "barbara@example.com", password: "squatter's password")
            // The link, as its transaction does it, holding the row while the login waits.
            let login = try await auth.database.whileLocked(by: {
                try await $0.execute("SELECT id FROM users WHERE email = 'barbara@example.com' FOR UPDATE")
            }) {
                let login = Task { try await auth.loginWithEmail("barbara@example.com", password: "squatter's password") }
                let checked = try await eventually { try await auth.database.someoneWaitsForALock() }
                #expect(checked, "the login checked the password")
                return login
            } thenCommitting: {
                try await $0.execute("UPDATE users SET google_subject = 'barbara-at-google', password_hash = NULL WHERE email = 'barbara@example.com'")
            }
            #expect(try await login.value.status == .unauthorized)
            let sessions = try await auth.database.query("SELECT count(*) AS n FROM sessions")
            #expect(try sessions[0].decode("n", as: Int64.self) == 1, "the registration's only")
        }
    }

    @Test func anotherGoogleAccountWithTheSameEmailAnswers409AndChangesNothing() async throws {
        try await LocalOpenIDIssuer.run { issuer async throws in
            try await AuthTestHarness.run(google: issuer) { auth async throws in
                let first = try await auth.loginWithGoogle(try await issuer.idToken(subject: "first-subject", email: "ann@example.com"))
                #expect(first.status == .ok)
                let before = try await Self.snapshot(auth)

                let second = try await auth.loginWithGoogle(try await issuer.idToken(subject: "second-subject", email: "ann@example.com"))
                #expect(second.status == .conflict)
                #expect(try second.problem().code == "account_conflict")
                #expect(try second.problem().detail == "This email is already linked to another Google account")
                #expect(try await Self.snapshot(auth) == before, "no user, link or session changed")
                #expect(try await auth.check(try first.session().accessToken).status == .ok)
                let again = try await auth.loginWithGoogle(try await issuer.idToken(subject: "first-subject", email: "ann@example.com"))
                #expect(try again.session().user.userId == first.session().user.userId)
            }
        }
    }

    /// Two Google accounts claim one registered email at the same moment: one links it, the
    /// other gets 409; and one Google account's first sign-in twice at once makes one user.
    @Test func racingSignInsLinkOnceAndCreateOnce() async throws {
        try await LocalOpenIDIssuer.run { issuer async throws in
            try await AuthTestHarness.run(google: issuer) { auth async throws in
                let registered = try await auth.registered(email: "race@example.com")
                let tokens = [
                    try await issuer.idToken(subject: "racer-a", email: "race@example.com"),
                    try await issuer.idToken(subject: "racer-b", email: "race@example.com"),
                ]
                let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                    for token in tokens { group.addTask { Int(try await auth.loginWithGoogle(token).status.code) } }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(statuses.sorted() == [200, 409])
                let linked = try await auth.database.query("SELECT google_subject FROM users WHERE id = \(registered.user.userId)")
                #expect(["racer-a", "racer-b"].contains(try linked[0].decode("google_subject", as: String?.self)))

                let same = try await issuer.idToken(subject: "newcomer", email: "newcomer@example.com")
                let users = try await withThrowingTaskGroup(of: String.self) { group in
                    for _ in 0..<4 { group.addTask { try await auth.loginWithGoogle(same).session().user.userId } }
                    return try await group.reduce(into: Set<String>()) { $0.insert($1) }
                }
                #expect(users.count == 1)
            }
        }
    }

    /// Every user with its Google link and every session with its revocation, as stored.
    static func snapshot(_ auth: AuthTestHarness) async throws -> [String] {
        let users = try await auth.database.query("SELECT id, email, google_subject, password_hash FROM users ORDER BY id")
        let sessions = try await auth.database.query("SELECT id, revoked_at FROM sessions ORDER BY id")
        return try users.map { "\(try $0.decode("id", as: String.self)) \(try $0.decode("email", as: String.self)) \(try $0.decode("google_subject", as: String?.self) ?? "-") \(try $0.decode("password_hash", as: String?.self) ?? "-")" }
            + sessions.map { "\(try $0.decode("id", as: String.self)) \($0.isNull("revoked_at"))" }
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
                #expect(issuer.fetches.count == 0, "answered at once, without asking for Google's keys")
            }
        }
    }
}
