import Foundation
import HTTPTypes
import PostlyService

/// Why the upstream could not be asked, said in the 503's `detail` and `code` when no stale
/// answer can stand in.
enum Unavailability: Sendable, Equatable {
    case notConfigured
    case budgetSpent(UpstreamBudget.Refusal)
    case upstreamFailed(UpstreamFailure)
    /// The budget's database did not answer.
    case budgetUncounted

    /// How long a client should wait when nothing tells when it will be better.
    static let shortRetrySeconds = 5

    func apiError(now: Date) -> APIError {
        let (code, detail, retryAfter): (String, String, Int) =
            switch self {
            case .notConfigured:
                ("not_configured", "Image suggestions are not configured: set PEXELS_API_KEY", 300)
            case .budgetSpent(.hourSpent(let until)):
                ("budget_spent", "This hour's budget of image provider calls is spent", Self.seconds(until: until, from: now))
            case .budgetSpent(.monthSpent(let until)):
                ("budget_spent", "This month's budget of image provider calls is spent", Self.seconds(until: until, from: now))
            case .budgetSpent(.rateLimitedUpstream(let until)):
                ("upstream_rate_limited", "The image provider is rate limiting this service", Self.seconds(until: until, from: now))
            case .upstreamFailed(.timeout):
                ("upstream_timeout", "The image provider did not answer in time", Self.shortRetrySeconds)
            case .upstreamFailed(.unreachable):
                ("upstream_unreachable", "The image provider is unreachable", Self.shortRetrySeconds)
            case .upstreamFailed(.status(let status)) where status == 401 || status == 403:
                ("upstream_error", "The image provider refused the configured key (status \(status))", Self.shortRetrySeconds)
            case .upstreamFailed(.status(let status)):
                ("upstream_error", "The image provider answered with an error (status \(status))", Self.shortRetrySeconds)
            case .upstreamFailed(.malformedAnswer):
                ("upstream_error", "The image provider answered something that is not a page of photos", Self.shortRetrySeconds)
            case .budgetUncounted:
                ("unavailable", "The database is unavailable", Self.shortRetrySeconds)
            }
        return APIError(.serviceUnavailable, code: code, detail: detail, headers: [.retryAfter: String(retryAfter)])
    }

    /// Whole seconds from `now` until `date`, at least 1.
    static func seconds(until date: Date, from now: Date) -> Int {
        max(1, Int(date.timeIntervalSince(now).rounded(.up)))
    }
}
