@testable import AuthService
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing
import TestSupport

@Suite struct LoginRateLimitTests {
    static let guesser: HTTPFields = [.forwardedFor: "203.0.113.66"]
    static let owner: HTTPFields = [.forwardedFor: "198.51.100.7"]

    @Test func theEleventhFailureAnswers429ToEveryAddressUntilTheWindowEnds() async throws {
        try await AuthTestHarness.run(configure: { $0.loginLimits.window = .seconds(3) }) { auth async throws in
            _ = try await auth.registered(email: "target@example.com", password: "the real password")
            _ = try await auth.registered(email: "bystander@example.com", password: "another password")
            for attempt in 1...10 {
                let response = try await auth.loginWithEmail("target@example.com", password: "guess \(attempt)", headers: Self.guesser)
                #expect(response.status == .unauthorized, "attempt \(attempt)")
            }
            let limited = try await auth.loginWithEmail("target@example.com", password: "guess 11", headers: Self.guesser)
            #expect(limited.status == .tooManyRequests)
            let retryAfter = try #require(limited.headers[.retryAfter].flatMap { Int($0) })
            #expect((1...60).contains(retryAfter))
            #expect(try limited.problem().code == "rate_limited")
            #expect(
                try await auth.loginWithEmail("target@example.com", password: "the real password", headers: Self.guesser).status
                    == .tooManyRequests, "the guessing address waits, even with the right password")
            #expect(
                try await auth.loginWithEmail("target@example.com", password: "the real password", headers: Self.owner).status
                    == .tooManyRequests, "another address waits too")
            #expect(try await auth.loginWithEmail("bystander@example.com", password: "another password", headers: Self.guesser).status == .ok)
            try await Task.sleep(for: .seconds(3))
            #expect(try await auth.loginWithEmail("target@example.com", password: "the real password", headers: Self.owner).status == .ok)
        }
    }

    /// A guess from each of many addresses: the email's limit still bounds the password checks.
    @Test func guessesFromManyAddressesShareTheEmailsLimit() async throws {
        try await AuthTestHarness.run { auth async throws in
            _ = try await auth.registered(email: "target@example.com", password: "the real password")
            var statuses: [HTTPResponse.Status] = []
            for attempt in 1...15 {
                let address: HTTPFields = [.forwardedFor: "203.0.113.\(attempt)"]
                statuses.append(try await auth.loginWithEmail("target@example.com", password: "guess \(attempt)", headers: address).status)
            }
            #expect(statuses == Array(repeating: .unauthorized, count: 10) + Array(repeating: .tooManyRequests, count: 5))
        }
    }

    /// Others' guesses do not lock the owner out where the owner signed in before: such an
    /// address is held only to its own failures (it waited with everyone else).
    @Test func anAddressThatSignedInBeforeIsHeldOnlyToItsOwnFailures() async throws {
        try await AuthTestHarness.run { auth async throws in
            _ = try await auth.registered(email: "target@example.com", password: "the real password")
            #expect(try await auth.loginWithEmail("target@example.com", password: "the real password", headers: Self.owner).status == .ok)
            for attempt in 1...10 {
                let address: HTTPFields = [.forwardedFor: "203.0.113.\(attempt)"]
                #expect(try await auth.loginWithEmail("target@example.com", password: "guess \(attempt)", headers: address).status == .unauthorized)
            }
            let stranger: HTTPFields = [.forwardedFor: "203.0.113.99"]
            #expect(try await auth.loginWithEmail("target@example.com", password: "the real password", headers: stranger).status == .tooManyRequests)
            #expect(try await auth.loginWithEmail("target@example.com", password: "the real password", headers: Self.owner).status == .ok)
            // The owner's address has the email's limit for its own failures, and no more.
            for attempt in 1...10 {
                #expect(try await auth.loginWithEmail("target@example.com", password: "typo \(attempt)", headers: Self.owner).status == .unauthorized)
            }
            let limited = try await auth.loginWithEmail("target@example.com", password: "the real password", headers: Self.owner)
            #expect(limited.status == .tooManyRequests)
            #expect((1...60).contains(try #require(limited.headers[.retryAfter].flatMap { Int($0) })))
        }
    }

    /// Known addresses together get three times the email's limit, then wait too: the shared
    /// exits an owner used (a VPN, Tor) must not buy unbounded guesses.
    @Test func knownAddressesTogetherStopAtThreeTimesTheEmailsLimit() async throws {
        try await AuthTestHarness.run { auth async throws in
            _ = try await auth.registered(email: "target@example.com", password: "the real password")
            let exits = (1...4).map { [HTTPField.Name.forwardedFor: "198.51.100.\($0)"] as HTTPFields }
            for exit in exits {
                #expect(try await auth.loginWithEmail("target@example.com", password: "the real password", headers: exit).status == .ok)
            }
            for (number, exit) in exits.prefix(3).enumerated() {
                for attempt in 1...10 {
                    let status = try await auth.loginWithEmail("target@example.com", password: "guess \(number).\(attempt)", headers: exit).status
                    #expect(status == .unauthorized)
                }
            }
            #expect(try await auth.loginWithEmail("target@example.com", password: "the real password", headers: exits[3]).status == .tooManyRequests)
        }
    }

    @Test func aClientAddressIsLimitedAcrossEmails() async throws {
        try await AuthTestHarness.run(configure: { $0.loginLimits.failuresPerClient = 5 }) { auth async throws in
            _ = try await auth.registered(email: "someone@example.com", password: "a good password")
            // Our gateway appends the address it saw; what the client claimed before it does not count.
            for attempt in 1...5 {
                let response = try await auth.loginWithEmail(
                    "victim\(attempt)@example.com", password: "guess",
                    headers: [.forwardedFor: "10.9.9.\(attempt), 203.0.113.7"])
                #expect(response.status == .unauthorized)
            }
            let limited = try await auth.loginWithEmail(
                "someone@example.com", password: "a good password", headers: [.forwardedFor: "10.1.1.1, 203.0.113.7"])
            #expect(limited.status == .tooManyRequests)
            let elsewhere = try await auth.loginWithEmail(
                "someone@example.com", password: "a good password", headers: [.forwardedFor: "198.51.100.9"])
            #expect(elsewhere.status == .ok)
        }
    }

    /// Addresses of one IPv6 /64 count as one client: walking them buys no more guesses.
    @Test func anIPv6ClientIsCountedByItsSlash64() async throws {
        try await AuthTestHarness.run(configure: { $0.loginLimits.failuresPerClient = 5 }) { auth async throws in
            _ = try await auth.registered(email: "someone@example.com", password: "a good password")
            for attempt in 1...5 {
                let address: HTTPFields = [.forwardedFor: "2001:db8:1:2::\(attempt)"]
                #expect(try await auth.loginWithEmail("victim\(attempt)@example.com", password: "guess", headers: address).status == .unauthorized)
            }
            let sameNetwork: HTTPFields = [.forwardedFor: "2001:db8:1:2:aaaa:bbbb:cccc:dddd"]
            #expect(try await auth.loginWithEmail("someone@example.com", password: "a good password", headers: sameNetwork).status == .tooManyRequests)
            let nextNetwork: HTTPFields = [.forwardedFor: "2001:db8:1:3::1"]
            #expect(try await auth.loginWithEmail("someone@example.com", password: "a good password", headers: nextNetwork).status == .ok)
        }
        #expect(LoginRateLimiter.network(of: "2001:DB8:1:2::7") == LoginRateLimiter.network(of: "2001:db8:1:2:ffff::1"))
        #expect(LoginRateLimiter.network(of: "203.0.113.7") == "203.0.113.7")
        #expect(LoginRateLimiter.network(of: "::ffff:203.0.113.7") == "203.0.113.7")
    }

    /// Thirty guesses at once: only the limit's worth get to a password check, however many
    /// arrive before the first check has finished.
    @Test func guessesAreChargedBeforeThePasswordIsChecked() async throws {
        try await AuthTestHarness.run { auth async throws in
            _ = try await auth.registered(email: "burst@example.com", password: "the real password")
            let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                for attempt in 1...30 {
                    group.addTask { try await auth.loginWithEmail("burst@example.com", password: "guess \(attempt)", headers: Self.guesser).status }
                }
                return try await group.reduce(into: [HTTPResponse.Status]()) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == .unauthorized }.count == 10)
            #expect(statuses.filter { $0 == .tooManyRequests }.count == 20)
        }
    }

    /// The emails and addresses tried are kept as digests only, and only for the window: a
    /// spray of emails of people who are no users leaves nothing of them behind.
    @Test func triedEmailsAreKeptOnlyAsDigestsAndOnlyForTheWindow() async throws {
        try await AuthTestHarness.run(configure: { $0.loginLimits.window = .seconds(1) }) { auth async throws in
            for attempt in 1...3 {
                #expect(try await auth.loginWithEmail("nobody\(attempt)@example.com", password: "guess", headers: Self.guesser).status == .unauthorized)
            }
            let rows = try await auth.database.query("SELECT email_digest, client_digest FROM login_failures")
            #expect(rows.count == 3)
            let stored = try rows.flatMap { [try $0.decode("email_digest", as: String.self), try $0.decode("client_digest", as: String.self)] }
            #expect(stored.allSatisfy { $0.range(of: "^[0-9a-f]{64}$", options: .regularExpression) != nil }, "\(stored)")
            // No sign-in comes after them: the purge alone empties the table.
            let purged = try await eventually(within: .seconds(5)) {
                try await auth.database.query("SELECT count(*) AS n FROM login_failures")[0].decode("n", as: Int.self) == 0
            }
            #expect(purged)
        }
    }

    /// Two instances on one database share one count, and an instance started afresh still
    /// holds it.
    @Test func instancesShareTheCountsAndARestartKeepsThem() async throws {
        let database = try await TestDatabase.create(poolSize: 1)
        @Sendable func login(_ client: any TestClientProtocol, password: String) async throws -> HTTPResponse.Status {
            let body = AuthTestHarness.json(["email": "shared@example.com", "password": password])
            var headers = Self.guesser
            headers[.contentType] = "application/json"
            return try await client.execute(uri: "/api/auth/login/email", method: .post, headers: headers, body: ByteBuffer(string: body)).status
        }
        try await Self.instance(on: database).test(.router) { first async throws in
            let registration = AuthTestHarness.json(["name": "Shared", "email": "shared@example.com", "password": "the real password"])
            let registered = try await first.execute(
                uri: "/api/auth/register", method: .post, headers: [.contentType: "application/json"], body: ByteBuffer(string: registration))
            #expect(registered.status == .created)
            try await Self.instance(on: database).test(.router) { second async throws in
                for attempt in 1...5 {
                    #expect(try await login(first, password: "first \(attempt)") == .unauthorized)
                    #expect(try await login(second, password: "second \(attempt)") == .unauthorized)
                }
                #expect(try await login(first, password: "one more") == .tooManyRequests)
                #expect(try await login(second, password: "one more") == .tooManyRequests)
            }
        }
        try await Self.instance(on: database).test(.router) { restarted async throws in
            #expect(try await login(restarted, password: "after the restart") == .tooManyRequests)
        }
        await database.drop()
    }
}

extension LoginRateLimitTests {
    /// An auth instance on `database`.
    static func instance(on database: TestDatabase) throws -> some ApplicationProtocol {
        var postgres = database.configuration
        postgres.poolSize = 4
        return try buildApplication(AuthTestHarness.configuration(postgres: postgres, kafka: try testConfiguration()), logger: testLogger)
    }
}

extension HTTPField.Name {
    static let forwardedFor = Self("X-Forwarded-For")!
}
