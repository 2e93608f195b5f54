import Foundation
import Metrics
import NIOCore
import PostlyService

/// Answers a question for cover images: from the cache when it is fresh (never limited),
/// else from the upstream, within the user's allowance and the service's budget, one call
/// for identical questions at once; when the upstream cannot be asked, from the cache
/// however old (saying so), else 503 naming why.
struct ImageSuggestions: Sendable {
    let cache: ResponseCache
    let budget: UpstreamBudget
    let allowance: UserAllowance
    /// Nil when no key is configured.
    let upstream: PexelsClient?
    let metrics: ImagesMetrics
    let now: @Sendable () -> Date
    let inFlight = InFlightCalls<Outcome>()

    struct Answer: Sendable {
        var body: ByteBuffer
        var isStale: Bool
    }

    /// What one upstream call (or the attempt at one) came to.
    enum Outcome: Sendable {
        case fetched(ByteBuffer)
        case unavailable(Unavailability)
    }

    func answer(_ query: ImageQuery, userId: String) async throws -> Answer {
        let key = query.key
        if let body = cache.fresh(key, now: now()) {
            metrics.hits.increment()
            return Answer(body: body, isStale: false)
        }
        metrics.misses.increment()
        guard let upstream else { return try staleAnswer(key, else: .notConfigured) }

        var allowedAgainAt: Date?
        let role = await inFlight.leadOrJoin(key) {
            allowedAgainAt = allowance.take(userId: userId, now: now())
            return allowedAgainAt == nil
        }
        switch role {
        case .refused:
            metrics.userLimited.increment()
            if let stale = staleEntry(key) { return stale }
            let seconds = Unavailability.seconds(until: allowedAgainAt ?? now(), from: now())
            throw APIError.tooManyRequests(
                retryAfterSeconds: seconds,
                "You asked for \(allowance.limit) new image searches within an hour; cached ones still answer")
        case .joined(let outcome):
            metrics.coalescedWaits.increment()
            return try answer(for: outcome, key: key)
        case .lead:
            let outcome: Outcome
            if let body = cache.fresh(key, now: now()) {
                // The call before this one stored it between the first look and the lead.
                allowance.giveBack(userId: userId)
                metrics.coalescedWaits.increment()
                outcome = .fetched(body)
            } else {
                outcome = await fetch(query, from: upstream, userId: userId)
            }
            inFlight.finish(key, with: outcome)
            return try answer(for: outcome, key: key)
        }
    }

    /// The upstream call, within the budget; the answer is cached.
    private func fetch(_ query: ImageQuery, from upstream: PexelsClient, userId: String) async -> Outcome {
        defer { metrics.record(budget.remaining(now: now()), cache.usage) }
        if let refusal = budget.reserve(now: now()) {
            allowance.giveBack(userId: userId)
            return .unavailable(.budgetSpent(refusal))
        }
        let started = ContinuousClock.now
        let result = await upstream.fetch(query)
        metrics.upstreamLatency.record(duration: started.duration(to: .now))
        switch result {
        case .answered(let body, let rateLimit):
            metrics.upstreamCall("200")
            budget.believe(rateLimit, now: now())
            let buffer = ByteBuffer(bytes: body)
            cache.store(buffer, under: query.key, now: now())
            return .fetched(buffer)
        case .rateLimited:
            metrics.upstreamCall("429")
            return .unavailable(.budgetSpent(.rateLimitedUpstream(until: budget.halt(now: now()))))
        case .failed(let failure):
            metrics.upstreamCall(failure.metricLabel)
            return .unavailable(.upstreamFailed(failure))
        }
    }

    private func answer(for outcome: Outcome, key: String) throws -> Answer {
        switch outcome {
        case .fetched(let body): Answer(body: body, isStale: false)
        case .unavailable(let reason): try staleAnswer(key, else: reason)
        }
    }

    private func staleAnswer(_ key: String, else reason: Unavailability) throws -> Answer {
        guard let stale = staleEntry(key) else { throw reason.apiError(now: now()) }
        return stale
    }

    private func staleEntry(_ key: String) -> Answer? {
        guard let body = cache.any(key) else { return nil }
        metrics.staleAnswers.increment()
        return Answer(body: body, isStale: true)
    }
}

extension UpstreamFailure {
    var metricLabel: String {
        switch self {
        case .timeout: "timeout"
        case .unreachable: "unreachable"
        case .status(let status): String(status)
        case .malformedAnswer: "malformed"
        }
    }
}

extension ImageSuggestions {
    /// What `/health/ready` says beside "ok": the service is ready without a key, but only
    /// the cache answers then.
    func readinessNotes() -> [String] {
        var notes: [String] = []
        if upstream == nil { notes.append("no key configured: set PEXELS_API_KEY; only cached answers are served") }
        let remaining = budget.remaining(now: now())
        if remaining.hour == 0 || remaining.month == 0 { notes.append("the upstream budget is spent for now; only cached answers are served") }
        return notes
    }
}
