import Foundation
import PostlyService
import Synchronization

/// Counts failed logins per email and per client address in a sliding window. Once either
/// count reaches its limit, further attempts answer 429 until the oldest failure leaves the
/// window. Only failures count, and each email has its own count, so someone else's wrong
/// passwords never lock out a correct login for another email.
///
/// The counts live in memory, per instance: behind N instances an attacker gets N times the
/// limit, which still makes guessing useless, and a restart forgets them.
public final class LoginRateLimiter: Sendable {
    public struct Limits: Sendable {
        public var failuresPerEmail: Int
        public var failuresPerClient: Int
        public var window: Duration

        public init(failuresPerEmail: Int = 10, failuresPerClient: Int = 30, window: Duration = .seconds(60)) {
            self.failuresPerEmail = failuresPerEmail
            self.failuresPerClient = failuresPerClient
            self.window = window
        }
    }

    private struct Failures {
        var byEmail: [String: [ContinuousClock.Instant]] = [:]
        var byClient: [String: [ContinuousClock.Instant]] = [:]
        var lastSweep = ContinuousClock.now
    }

    /// Keys beyond which old entries are swept at once, so a flood of distinct emails
    /// cannot grow the table without bound.
    private static let sweepThreshold = 10_000

    public let limits: Limits
    private let failures = Mutex(Failures())

    public init(limits: Limits) {
        self.limits = limits
    }

    /// Throws 429 with `Retry-After` when `email` or `client` has used up its failures.
    public func checkAllowed(email: String, client: String, now: ContinuousClock.Instant = .now) throws {
        let limits = self.limits
        let wait = failures.withLock { state -> Duration? in
            let emailWait = Self.wait(&state.byEmail, key: email, limit: limits.failuresPerEmail, window: limits.window, now: now)
            let clientWait = Self.wait(&state.byClient, key: client, limit: limits.failuresPerClient, window: limits.window, now: now)
            return [emailWait, clientWait].compactMap { $0 }.max()
        }
        if let wait {
            let seconds = Int((Double(wait.components.seconds) + Double(wait.components.attoseconds) / 1e18).rounded(.up))
            throw APIError.tooManyRequests(retryAfterSeconds: seconds, "Too many failed logins; try again later")
        }
    }

    public func recordFailure(email: String, client: String, now: ContinuousClock.Instant = .now) {
        let window = limits.window
        failures.withLock { state in
            state.byEmail[email, default: []].append(now)
            state.byClient[client, default: []].append(now)
            if state.byEmail.count + state.byClient.count > Self.sweepThreshold || state.lastSweep.duration(to: now) > window {
                Self.sweep(&state.byEmail, window: window, now: now)
                Self.sweep(&state.byClient, window: window, now: now)
                state.lastSweep = now
            }
        }
    }

    /// A correct password clears the email's failures (not the client's).
    public func recordSuccess(email: String) {
        failures.withLock { _ = $0.byEmail.removeValue(forKey: email) }
    }

    private static func wait(
        _ table: inout [String: [ContinuousClock.Instant]], key: String, limit: Int, window: Duration, now: ContinuousClock.Instant
    ) -> Duration? {
        guard var times = table[key] else { return nil }
        times.removeAll { $0.duration(to: now) >= window }
        table[key] = times.isEmpty ? nil : times
        guard times.count >= limit, let oldest = times.first else { return nil }
        return window - oldest.duration(to: now)
    }

    private static func sweep(_ table: inout [String: [ContinuousClock.Instant]], window: Duration, now: ContinuousClock.Instant) {
        table = table.compactMapValues { times in
            let recent = times.filter { $0.duration(to: now) < window }
            return recent.isEmpty ? nil : recent
        }
    }
}
