import Hummingbird
import PostlyService
import Testing

@testable import AuthService

@Suite struct LoginRateLimiterTests {
    let limiter = LoginRateLimiter(limits: .init(failuresPerEmail: 3, failuresPerClient: 5, window: .seconds(60)))

    @Test func failuresExpireWithTheWindow() throws {
        let start = ContinuousClock.now
        for _ in 0..<3 { limiter.recordFailure(email: "a@x.io", client: "1.2.3.4", now: start) }
        let error = try #require(throws: APIError.self) { try limiter.checkAllowed(email: "a@x.io", client: "1.2.3.4", now: start + .seconds(10)) }
        #expect(error.status == .tooManyRequests)
        #expect(error.headers[.retryAfter] == "50")
        try limiter.checkAllowed(email: "a@x.io", client: "1.2.3.4", now: start + .seconds(61))
    }

    @Test func otherEmailsAreNotLimitedByOnesFailures() throws {
        let now = ContinuousClock.now
        for _ in 0..<3 { limiter.recordFailure(email: "a@x.io", client: "1.2.3.4", now: now) }
        try limiter.checkAllowed(email: "b@x.io", client: "1.2.3.4", now: now)
        try limiter.checkAllowed(email: "b@x.io", client: "5.6.7.8", now: now)
    }

    @Test func aClientIsLimitedAcrossEmails() throws {
        let now = ContinuousClock.now
        for index in 0..<5 { limiter.recordFailure(email: "user\(index)@x.io", client: "1.2.3.4", now: now) }
        #expect(throws: APIError.self) { try limiter.checkAllowed(email: "fresh@x.io", client: "1.2.3.4", now: now) }
        try limiter.checkAllowed(email: "fresh@x.io", client: "5.6.7.8", now: now)
    }

    @Test func aSuccessClearsTheEmailsFailures() throws {
        let now = ContinuousClock.now
        for _ in 0..<2 { limiter.recordFailure(email: "a@x.io", client: "1.2.3.4", now: now) }
        limiter.recordSuccess(email: "a@x.io")
        limiter.recordFailure(email: "a@x.io", client: "9.9.9.9", now: now)
        try limiter.checkAllowed(email: "a@x.io", client: "9.9.9.9", now: now)
    }
}
