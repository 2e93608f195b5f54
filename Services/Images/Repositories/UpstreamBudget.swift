import Foundation
import Synchronization

/// How many calls the service may still make to the image provider. It counts its own calls
/// against an hourly limit (a sliding hour) and a monthly one (the calendar month in UTC, or
/// the period the upstream's `X-Ratelimit-Reset` announces), never exceeds either, believes
/// `X-Ratelimit-Remaining` when it says less remains than the service counted, and after an
/// upstream 429 (which says nothing about when to come back) calls nothing for an hour.
final class UpstreamBudget: Sendable {
    /// Why no call may be made now, and from when one may.
    enum Refusal: Sendable, Equatable {
        case hourSpent(until: Date)
        case monthSpent(until: Date)
        case rateLimitedUpstream(until: Date)

        var until: Date {
            switch self {
            case .hourSpent(let until), .monthSpent(let until), .rateLimitedUpstream(let until): until
            }
        }
    }

    struct Remaining: Sendable, Equatable {
        var hour: Int
        var month: Int
    }

    struct State: Sendable {
        /// The calls of the last hour, oldest first.
        var recentCalls: [Date] = []
        var monthUsed = 0
        var monthEnd: Date
        var haltedUntil: Date?
    }

    static let hour: TimeInterval = 3600
    /// A reset further away than this is not believed (Pexels' period is a month).
    static let longestPeriod: TimeInterval = 32 * 86_400

    let hourlyLimit: Int
    let monthlyLimit: Int
    private let state: Mutex<State>

    init(hourlyLimit: Int, monthlyLimit: Int, now: Date) {
        self.hourlyLimit = hourlyLimit
        self.monthlyLimit = monthlyLimit
        self.state = Mutex(State(monthEnd: Self.endOfMonth(after: now)))
    }

    /// Counts one call at `now` against both windows, or says why none may be made.
    func reserve(now: Date) -> Refusal? {
        state.withLock { state in
            advance(&state, to: now)
            if let haltedUntil = state.haltedUntil { return .rateLimitedUpstream(until: haltedUntil) }
            if state.recentCalls.count >= hourlyLimit { return .hourSpent(until: state.recentCalls[0] + Self.hour) }
            if state.monthUsed >= monthlyLimit { return .monthSpent(until: state.monthEnd) }
            state.recentCalls.append(now)
            state.monthUsed += 1
            return nil
        }
    }

    /// Takes in what a successful answer's headers said.
    func believe(_ rateLimit: PexelsClient.RateLimit, now: Date) {
        state.withLock { state in
            advance(&state, to: now)
            if let reset = rateLimit.reset, reset > now, reset.timeIntervalSince(now) <= Self.longestPeriod {
                state.monthEnd = reset
            }
            if let remaining = rateLimit.remaining {
                state.monthUsed = max(state.monthUsed, monthlyLimit - max(0, remaining))
            }
        }
    }

    /// After an upstream 429: nothing is called for an hour. Returns until when.
    func halt(now: Date) -> Date {
        let until = now + Self.hour
        state.withLock { $0.haltedUntil = until }
        return until
    }

    func remaining(now: Date) -> Remaining {
        state.withLock { state in
            advance(&state, to: now)
            let halted = state.haltedUntil != nil
            return Remaining(
                hour: halted ? 0 : hourlyLimit - state.recentCalls.count, month: halted ? 0 : max(0, monthlyLimit - state.monthUsed))
        }
    }

    private func advance(_ state: inout State, to now: Date) {
        if let first = state.recentCalls.first, first + Self.hour <= now {
            state.recentCalls.removeAll { $0 + Self.hour <= now }
        }
        if now >= state.monthEnd {
            state.monthUsed = 0
            state.monthEnd = Self.endOfMonth(after: now)
        }
        if let haltedUntil = state.haltedUntil, haltedUntil <= now { state.haltedUntil = nil }
    }

    static func endOfMonth(after date: Date) -> Date {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let start = calendar.dateInterval(of: .month, for: date)!
        return start.end
    }
}
