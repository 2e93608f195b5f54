import AuthService
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@Suite struct LoginRateLimitTests {
    @Test func theEleventhFailureInAMinuteAnswers429AndAnotherEmailStillSignsIn() async throws {
        try await AuthTestHarness.run { auth async throws in
            _ = try await auth.registered(email: "target@example.com", password: "the real password")
            _ = try await auth.registered(email: "bystander@example.com", password: "another password")
            for attempt in 1...10 {
                let response = try await auth.loginWithEmail("target@example.com", password: "guess \(attempt)")
                #expect(response.status == .unauthorized, "attempt \(attempt)")
            }
            let limited = try await auth.loginWithEmail("target@example.com", password: "guess 11")
            #expect(limited.status == .tooManyRequests)
            let retryAfter = try #require(limited.headers[.retryAfter].flatMap { Int($0) })
            #expect((1...60).contains(retryAfter))
            #expect(try limited.problem().code == "rate_limited")
            #expect(
                try await auth.loginWithEmail("target@example.com", password: "the real password").status == .tooManyRequests,
                "even the right password waits")
            #expect(try await auth.loginWithEmail("bystander@example.com", password: "another password").status == .ok)
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
}

extension HTTPField.Name {
    static let forwardedFor = Self("X-Forwarded-For")!
}
