import Foundation
import PostlyService

/// When a failed delivery is tried again, as Mastodon's delivery worker decides: a 2xx is
/// done; 501 and a 4xx other than 401, 408 and 429 will never succeed; anything else (a 5xx,
/// those three, no answer) is retried after 1 m, 5 m, 30 m, 2 h, 6 h, 12 h, 24 h and 24 h
/// (about three days), or later when the answer's `Retry-After` says so, then given up.
struct RetryPolicy: Sendable {
    /// The delays in minutes at the default base of one minute.
    static let schedule: [Double] = [1, 5, 30, 120, 360, 720, 1440, 1440]

    /// The first delay; the others keep the schedule's proportions.
    let base: Duration

    static func isPermanent(status: Int) -> Bool {
        status == 501 || ((400..<500).contains(status) && ![401, 408, 429].contains(status))
    }

    /// When to try again after `attempts` attempts have failed, nil when it is time to give
    /// up. `retryAfter` is the seconds an answer asked for.
    func retryAt(afterAttempts attempts: Int, retryAfter: TimeInterval?, now: Date) -> Date? {
        guard attempts >= 1, attempts <= Self.schedule.count else { return nil }
        let delay = Self.schedule[attempts - 1] * base.seconds
        return now.addingTimeInterval(max(delay, min(retryAfter ?? 0, 24 * 3600)))
    }

    /// The seconds a `Retry-After` header asks for: a number of seconds, or an HTTP date.
    static func retryAfter(_ header: String?, now: Date) -> TimeInterval? {
        guard let header = header?.trimmingCharacters(in: .whitespaces) else { return nil }
        if let seconds = Int(header) { return TimeInterval(max(0, seconds)) }
        return HTTPDate.parse(header).map { max(0, $0.timeIntervalSince(now)) }
    }
}
