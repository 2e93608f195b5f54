import AuthService
import Foundation
import PostlyModels
import Testing
import TestSupport

/// `POST /internal/import/users`, and the first login of an imported user: the Werkzeug
/// password works once more and is then stored as bcrypt.
@Suite struct UsersImportTests {
    static func user(
        _ id: String, email: String, name: String = "Ada Lovelace", passwordHash: String? = nil, googleSubject: String? = nil
    ) -> [String: Any] {
        [
            "userId": id, "name": name, "email": email, "passwordHash": passwordHash ?? NSNull(),
            "googleSubject": googleSubject ?? NSNull(), "profilePicture": NSNull(),
            "createdAt": "2026-01-02T03:04:05.678Z", "lastLogin": "2026-03-01T00:00:00Z",
        ]
    }

    static func batch(_ users: [[String: Any]]) -> String {
        ImportTesting.json(["users": users])
    }

    static func withImport(_ body: @escaping @Sendable (AuthTestHarness) async throws -> Void) async throws {
        try await AuthTestHarness.run(configure: { $0.service.importToken = Secret(ImportTesting.token) }, body)
    }

    @Test func theRouteDoesNotExistWithoutTheImportToken() async throws {
        try await AuthTestHarness.run { auth in
            let answer = try await auth.harness.importBatch("/internal/import/users", json: Self.batch([Self.user("u1", email: "a@example.com")]))
            #expect(answer.status == .notFound)
            #expect(try await auth.database.query("SELECT id FROM users").isEmpty)
        }
    }

    @Test func aWrongTokenIsUnauthorized() async throws {
        try await Self.withImport { auth in
            for token in ["wrong", nil] as [String?] {
                let answer = try await auth.harness.importBatch(
                    "/internal/import/users", json: Self.batch([Self.user("u1", email: "a@example.com")]), token: token)
                #expect(answer.status == .unauthorized)
                #expect(answer.json["code"] as? String == "unauthorized")
            }
            #expect(try await auth.database.query("SELECT id FROM users").isEmpty)
        }
    }

    @Test func usersAreCreatedOnceAndAnnouncedAsImported() async throws {
        try await Self.withImport { auth in
            let batch = Self.batch([
                Self.user("65f1a2b3c4d5e6f708192a3b", email: "Ada@Example.com ", passwordHash: WerkzeugHashTests.vectors[0].hash),
                Self.user("109876543210987654321", email: "grace@example.com", name: "Grace", googleSubject: "109876543210987654321"),
            ])
            let first = try await auth.harness.importBatch("/internal/import/users", json: batch)
            #expect(first.status == .ok)
            #expect(try first.importOutcome() == ImportOutcome(created: 2, existing: 0, rejected: []))
            let row = try #require(try await auth.database.query("SELECT email, created_at FROM users WHERE id = '65f1a2b3c4d5e6f708192a3b'").first)
            #expect(try row.decode("email", as: String.self) == "ada@example.com")
            #expect(Timestamp.format(try row.decode("created_at", as: Date.self)) == "2026-01-02T03:04:05.678Z")

            // Renamed since: a second run leaves the user alone and announces nothing.
            try await auth.database.execute("UPDATE users SET name = 'Ada King' WHERE id = '65f1a2b3c4d5e6f708192a3b'")
            let second = try await auth.harness.importBatch("/internal/import/users", json: batch)
            #expect(try second.importOutcome() == ImportOutcome(created: 0, existing: 2, rejected: []))
            let name = try await auth.database.query("SELECT name FROM users WHERE id = '65f1a2b3c4d5e6f708192a3b'").first?.decode("name", as: String.self)
            #expect(name == "Ada King")
            let events = try await ImportTesting.outboxEvents(in: auth.database)
            #expect(events.map(\.type) == [.userRegistered, .userRegistered])
            #expect(events.map(\.key) == ["65f1a2b3c4d5e6f708192a3b", "109876543210987654321"])
            #expect(events.allSatisfy { $0.imported && $0.sequence == 1 })
        }
    }

    @Test func anEmailOrGoogleAccountAnotherUserHoldsIsRejected() async throws {
        try await Self.withImport { auth in
            _ = try await auth.registered(email: "ada@example.com")
            _ = try await auth.harness.importBatch(
                "/internal/import/users", json: Self.batch([Self.user("g1", email: "g@example.com", googleSubject: "sub-1")]))
            let answer = try await auth.harness.importBatch(
                "/internal/import/users",
                json: Self.batch([
                    Self.user("u1", email: "ada@example.com"), Self.user("u2", email: "other@example.com", googleSubject: "sub-1"),
                    Self.user("u3", email: "not an email"), Self.user("u4", email: "fine@example.com"),
                ]))
            let outcome = try answer.importOutcome()
            #expect(outcome.created == 1 && outcome.rejected.map(\.id) == ["u1", "u2", "u3"])
            #expect(outcome.rejected.first?.reason == "another user holds this email")
        }
    }

    @Test func batchesOverTheLimitsAreRefusedAndChangeNothing() async throws {
        try await Self.withImport { auth in
            let many = Self.batch((0..<501).map { Self.user("u\($0)", email: "u\($0)@example.com") })
            let tooMany = try await auth.harness.importBatch("/internal/import/users", json: many)
            #expect(tooMany.status == .unprocessableContent)
            let large = Self.batch([Self.user("u1", email: "a@example.com", name: String(repeating: "n", count: 901 << 10))])
            #expect(try await auth.harness.importBatch("/internal/import/users", json: large).status == .contentTooLarge)
            #expect(try await auth.database.query("SELECT id FROM users").isEmpty)
        }
    }

    /// A user the database cannot hold (an id of kilobytes, a NUL) or whose id cannot name it
    /// (a space) is that user's rejection; the batch failed with it (500, or 400), its other
    /// users with it.
    @Test func aUserTheDatabaseCannotHoldIsRejectedAlone() async throws {
        try await Self.withImport { auth in
            let users = [
                Self.user(String(repeating: "x", count: 3_000), email: "long-id@example.com"),
                Self.user("nul-name", email: "nul@example.com", name: "A\u{0}da"),
                Self.user("nul-email", email: "n\u{0}ul@example.com"),
                Self.user("google-id", email: "long-subject@example.com", googleSubject: String(repeating: "1", count: 3_000)),
                Self.user("legacy 42", email: "spaced@example.com"),
                Self.user("fine", email: "fine@example.com"),
            ]
            let outcome = try await auth.harness.importBatch("/internal/import/users", json: Self.batch(users)).importOutcome()
            #expect(outcome.created == 1)
            #expect(outcome.rejected.map(\.reason) == [
                "userId is longer than 255 bytes", "name must not contain NUL characters", "email must not contain NUL characters",
                "googleSubject is longer than 255 bytes",
                "userId contains a space or a control character",
            ])
            #expect(try await auth.database.query("SELECT id FROM users").map { try $0.decode("id", as: String.self) } == ["fine"])
        }
    }

    /// The earlier backend had no limit on names; the token carries the API's 100 characters
    /// of one, so it fits the gateway's 8 KiB of headers (it carried 6,000 bytes, and every
    /// request with it was refused).
    @Test func anImportedUserWithALongNameGetsATokenThatFitsAHeader() async throws {
        try await Self.withImport { auth in
            let vector = try #require(WerkzeugHashTests.vectors.first { $0.verifies })
            let user = Self.user("long-name", email: "long-name@example.com", name: String(repeating: "Lovelace", count: 750), passwordHash: vector.hash)
            #expect(try await auth.harness.importBatch("/internal/import/users", json: Self.batch([user])).importOutcome().created == 1)
            let session = try await auth.loginWithEmail("long-name@example.com", password: vector.password).session()
            #expect(session.accessToken.utf8.count < 1_024)
            #expect(session.user.name.count == 6_000, "the account keeps its name")
            #expect(try await auth.check(session.accessToken).status == .ok)
        }
    }

    /// Two first logins of an imported user at once (a double tap, two devices) both check the
    /// imported hash and both replace it: the second found the first's hash there, and answered
    /// 401 to the right password.
    @Test func twoFirstLoginsOfAnImportedUserAtOnceBothSignIn() async throws {
        try await Self.withImport { auth in
            let vector = try #require(WerkzeugHashTests.vectors.first { $0.verifies })
            let user = Self.user("twice", email: "twice@example.com", passwordHash: vector.hash)
            #expect(try await auth.harness.importBatch("/internal/import/users", json: Self.batch([user])).importOutcome().created == 1)
            let logins = try await auth.database.whileLocked(by: { try await $0.execute("SELECT 1 FROM users WHERE id = 'twice' FOR UPDATE") }) {
                let logins = (0..<2).map { _ in
                    Task { try await auth.loginWithEmail("twice@example.com", password: vector.password).status }
                }
                let bothWait = try await eventually { try await auth.database.statementsWaitingForALock() == 2 }
                #expect(bothWait)
                return logins
            }
            for login in logins { #expect(try await login.value == .ok) }
        }
    }

    /// A hash cheaper than ours (here bcrypt at cost 4, where we hash at 8) answers a wrong
    /// password no sooner than an unknown email does (it answered in a fraction of the time,
    /// telling that the email has an account), and the first login replaces it with ours.
    @Test func aCheaperImportedHashAnswersInOurTimeAndIsReplacedAtLogin() async throws {
        try await AuthTestHarness.run(configure: { $0.service.importToken = Secret(ImportTesting.token); $0.bcryptCost = 8 }) { auth in
            let cheap = try await PasswordHasher(cost: 4).hash("the right one")
            let user = Self.user("cheap", email: "cheap@example.com", passwordHash: cheap)
            #expect(try await auth.harness.importBatch("/internal/import/users", json: Self.batch([user])).importOutcome().created == 1)
            var wrongPasswordTimes: [Duration] = []
            var unknownEmailTimes: [Duration] = []
            for attempt in 0..<5 {
                var started = ContinuousClock.now
                #expect(try await auth.loginWithEmail("cheap@example.com", password: "wrong \(attempt)").status == .unauthorized)
                wrongPasswordTimes.append(started.duration(to: .now))
                started = ContinuousClock.now
                #expect(try await auth.loginWithEmail("nobody\(attempt)@example.com", password: "wrong").status == .unauthorized)
                unknownEmailTimes.append(started.duration(to: .now))
            }
            // The fastest of each: other work only ever adds time.
            let (wrongPassword, unknownEmail) = (wrongPasswordTimes.min()!, unknownEmailTimes.min()!)
            #expect(wrongPassword * 3 > unknownEmail, "wrong password \(wrongPassword) vs unknown email \(unknownEmail)")
            #expect(try await auth.loginWithEmail("cheap@example.com", password: "the right one").status == .ok)
            let stored = try await auth.database.query("SELECT password_hash FROM users WHERE id = 'cheap'").first?.decode("password_hash", as: String.self)
            #expect(stored?.hasPrefix("$bcrypt-sha256$$2b$08$") == true, "\(stored ?? "none")")
        }
    }

    @Test func anImportedUserLogsInWithTheOldPasswordWhichIsThenStoredAsBcrypt() async throws {
        try await Self.withImport { auth in
            let users = WerkzeugHashTests.vectors.enumerated().map { index, vector in
                Self.user("legacy-\(index)", email: "legacy-\(index)@example.com", passwordHash: vector.hash)
            }
            #expect(try await auth.harness.importBatch("/internal/import/users", json: Self.batch(users)).importOutcome().created == users.count)
            for (index, vector) in WerkzeugHashTests.vectors.enumerated() {
                let email = "legacy-\(index)@example.com"
                #expect(try await auth.loginWithEmail(email, password: vector.password + "!").status == .unauthorized)
                let login = try await auth.loginWithEmail(email, password: vector.password)
                let stored = try await auth.database.query("SELECT password_hash FROM users WHERE id = \("legacy-\(index)")").first?
                    .decode("password_hash", as: String.self)
                guard vector.verifies else {
                    #expect(login.status == .unauthorized, "\(vector.method)")
                    #expect(stored == vector.hash)
                    continue
                }
                #expect(login.status == .ok, "\(vector.method)")
                #expect(stored?.hasPrefix("$bcrypt-sha256$$2b$04$") == true, "\(vector.method)")
                // And the new hash works: the same password, once more.
                #expect(try await auth.loginWithEmail(email, password: vector.password).status == .ok)
            }
        }
    }
}
