import Foundation
import MetricsTestKit
import Testing

@testable import AuthService

@Suite struct PasswordHasherTests {
    /// Hashes stored before HummingbirdBcrypt: made by the Swift bcrypt this project used to
    /// carry (cost 12) and by libxcrypt's `crypt()` (Python's `crypt` module). They must keep
    /// verifying.
    static let storedHashes: [(password: String, hash: String)] = [
        ("correct horse battery staple", "$2b$12$TJDe7xXAifXc/Um4.SwKZ.vWLjtw8LUnCUdNHeytf2YFNelNZv1cO"),
        ("pässwörd ✓ 123", "$2b$12$ldu1uqSRz6S1xL0zVsV9Q.vRm5t0DML3HBzWS/h6iNUIFOqgu4wau"),
        ("correct horse battery staple", "$2b$12$abcdefghijklmnopqrstuu0sDWleciW5uGBGYwxpcgAsh9WK4bWNy"),
        ("password", "$2b$04$Ti2a7puIu4VnLmM.JZD/mOBEeKTdOjyPkR/jI/OKE5HbTnw/B4/va"),
        ("", "$2b$04$mtWJWJsXRES6QJGBZnER6ujQXh9NxV8pnNw8mNGPYsEBT1BgcWaWK"),
        ("U*U", "$2b$04$BIsa1Z8yVlZnQB1wm.UKcOpnAEn02hG3Za6egbQb8pOH1B6xD7Zt6"),
        ("correct horse battery staple \u{e9}", "$2b$04$8.A6yv0idymArZu7pABO..d62cXQFUTFm.rmHDejsMtkYT/y.wzX2"),
        (String(repeating: "a", count: 80), "$2b$04$6ltYli3IcKmXsU.6WEvbyu3o1jz0ay/eBupklgIUZtLb0FzqnE1im"),
    ]

    @Test func hashesStoredByTheOldCodeAndByLibxcryptStillVerify() async throws {
        let hasher = PasswordHasher(cost: 4)
        for stored in Self.storedHashes {
            #expect(try await hasher.verify(stored.password, against: stored.hash), "\(stored.hash)")
            #expect(try await !hasher.verify("x" + stored.password, against: stored.hash), "\(stored.hash)")
        }
    }

    /// A hash cheaper than ours (imported at cost 4, where we check at 10) answers a wrong
    /// password no sooner than an unknown email (it answered about 60 times sooner).
    @Test func aCheaperHashTakesAsLongAsOurs() async throws {
        let hasher = PasswordHasher(cost: 10)
        let cheap = try await PasswordHasher(cost: 4).hash("the right one")
        func fastest(of hash: String?) async throws -> Duration {
            var times: [Duration] = []
            for attempt in 0..<3 {
                let started = ContinuousClock.now
                #expect(try await !hasher.verify("wrong \(attempt)", against: hash))
                times.append(started.duration(to: .now))
            }
            return times.min()!
        }
        let (unknownEmail, cheaper) = (try await fastest(of: nil), try await fastest(of: cheap))
        #expect(cheaper >= unknownEmail * 0.8, "cheaper hash \(cheaper) vs unknown email \(unknownEmail)")
        #expect(try await hasher.verify("the right one", against: cheap))
    }

    @Test func newHashesAreSaltedPreHashedTwoBAtTheConfiguredCost() async throws {
        let hasher = PasswordHasher(cost: 5)
        let first = try await hasher.hash("s3cret pass")
        let second = try await hasher.hash("s3cret pass")
        #expect(first != second)
        #expect(first.hasPrefix("$bcrypt-sha256$$2b$05$"))
        #expect(first.count == "$bcrypt-sha256$".count + 60)
        #expect(try await hasher.verify("s3cret pass", against: first))
        #expect(try await !hasher.verify("s3cret pasS", against: first))
    }

    /// Every `$bcrypt-sha256$` hash stored so far was made of this pre-hash: it must never
    /// change (the expected value is Python's `base64.b64encode(hashlib.sha256(...).digest())`).
    @Test func thePreHashIsSHA256InStandardPaddedBase64() {
        #expect(PasswordHasher.preHashed("pässword 🔑") == "unzJEq5gYpU0Z/5qDrrgG0dQwkx/dOo1Rn1uV/kD60Y=")
    }

    /// bcrypt alone reads 72 bytes: a password that differs only after them must not match.
    @Test func everyByteOfALongPasswordCounts() async throws {
        let hasher = PasswordHasher(cost: 4)
        let hash = try await hasher.hash(String(repeating: "a", count: 72) + "b")
        #expect(try await hasher.verify(String(repeating: "a", count: 72) + "b", against: hash))
        #expect(try await !hasher.verify(String(repeating: "a", count: 72) + "c", against: hash))
        #expect(try await !hasher.verify(String(repeating: "a", count: 72), against: hash))
        let umlauts = try await hasher.hash(String(repeating: "ü", count: 40) + "x")
        #expect(try await !hasher.verify(String(repeating: "ü", count: 40) + "y", against: umlauts))
    }

    /// `postly_auth_password_checks_total`: one a verification, a wrong password's and an
    /// unknown account's (the dummy hash) included, none a new hash.
    @Test func everyVerificationIsCounted() async throws {
        let metrics = TestMetrics()
        let hasher = PasswordHasher(cost: 4, metrics: metrics)
        let hash = try await hasher.hash("the password")
        _ = try await hasher.verify("the password", against: hash)
        _ = try await hasher.verify("a guess", against: hash)
        _ = try await hasher.verify("a guess", against: nil)
        #expect(try metrics.expectCounter("postly_auth_password_checks_total").totalValue == 3)
    }

    /// A bcrypt hash past the cost ceiling (an imported one can carry any cost) never matches,
    /// and costs what a wrong password costs: one of cost 31 held a hashing slot for a day and
    /// a half at each login attempt.
    @Test func aHashPastTheCostCeilingNeverMatches() async throws {
        let hasher = PasswordHasher(cost: 4)
        let costly = try await PasswordHasher(cost: PasswordHasher.costCeiling + 1).hash("right")
        #expect(try await !hasher.verify("right", against: costly))
        // Below the ceiling, a hash above the configured cost verifies (storedHashes: cost 12).
    }

    @Test func anUnknownAccountOrAMalformedHashNeverMatches() async throws {
        let hasher = PasswordHasher(cost: 4)
        #expect(try await !hasher.verify("x", against: nil))
        #expect(try await !hasher.verify("x", against: "$2b$04$short"))
        #expect(try await !hasher.verify("x", against: "$1$" + String(repeating: "a", count: 57)))
    }
}
