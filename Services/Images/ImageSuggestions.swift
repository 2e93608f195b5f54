import Foundation
import Metrics
import NIOCore
import PostlyPostgres
import PostlyService

/// Answers a question for cover images: from the cache when it is fresh (never limited),
/// else from the upstream, within the user's allowance and the service's budget, one call
/// for identical questions at once; when the upstream cannot be asked (or the budget, in
/// the database, cannot be counted), from the cache however old (saying so), else 503
/// naming why.
struct ImageSuggestions: Sendable {
    let cache: ResponseCache
    let budget: UpstreamBudget
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

        while true {
            switch await inFlight.leadOrJoin(key) {
            case .joined(let outcome?):
                metrics.coalescedWaits.increment()
                return try answer(for: outcome, key: key)
            case .joined(nil):
                continue
            case .lead:
                // Every way out of the lead finishes it, or those who joined would wait for good.
                let outcome: Outcome
                do {
                    if let body = cache.fresh(key, now: now()) {
                        // The call before this one stored it between the first look and the lead.
                        metrics.coalescedWaits.increment()
                        outcome = .fetched(body)
                    } else {
                        outcome = try await fetch(query, from: upstream, userId: userId)
                    }
                } catch let limited as UserLimited {
                    inFlight.finish(key, with: nil)
                    metrics.userLimited.increment()
                    if let stale = staleEntry(key) { return stale }
                    throw APIError.tooManyRequests(
                        retryAfterSeconds: Unavailability.seconds(until: limited.until, from: now()),
                        "You asked for \(budget.userHourlyLimit) new image searches within an hour; cached ones still answer")
                } catch is DatabaseError {
                    // The budget cannot be counted: an old answer is better than none, and
                    // those who joined have this one's (they waited their turn on the database
                    // one after another, up to the gateway's timeout).
                    let outcome = Outcome.unavailable(.budgetUncounted)
                    inFlight.finish(key, with: outcome)
                    return try answer(for: outcome, key: key)
                } catch {
                    inFlight.finish(key, with: nil)
                    throw error
                }
                inFlight.finish(key, with: outcome)
                return try answer(for: outcome, key: key)
            }
        }
    }

    /// The user has made their allowance of upstream calls this hour; the next is theirs at `until`.
    private struct UserLimited: Error {
        var until: Date
    }

    /// The upstream call, within the user's allowance and the budget; the answer is cached.
    private func fetch(_ query: ImageQuery, from upstream: PexelsClient, userId: String) async throws -> Outcome {
        let outcome = try await callWithinBudget(query, from: upstream, userId: userId)
        if let remaining = budget.remaining { metrics.record(remaining) }
        metrics.record(cache.usage)
        return outcome
    }

    private func callWithinBudget(_ query: ImageQuery, from upstream: PexelsClient, userId: String) async throws -> Outcome {
        let call: UpstreamBudget.Call
        switch try await budget.reserve(userId: userId, now: now()) {
        case .granted(let granted): call = granted
        case .refused(let refusal): return .unavailable(.budgetSpent(refusal))
        case .userLimited(let until): throw UserLimited(until: until)
        }
        let started = ContinuousClock.now
        let result = await upstream.fetch(query)
        metrics.upstreamLatency.record(duration: started.duration(to: .now))
        switch result {
        case .answered(let body, let rateLimit):
            metrics.upstreamCall("200")
            let buffer = ByteBuffer(bytes: body)
            cache.store(buffer, under: query.key, now: now())
            await budget.believe(rateLimit, of: call, now: now())
            return .fetched(buffer)
        case .rateLimited:
            metrics.upstreamCall("429")
            return .unavailable(.budgetSpent(.rateLimitedUpstream(until: await budget.halt(now: now()))))
        case .failed(let failure):
            metrics.upstreamCall(failure.metricLabel)
            return .unavailable(.upstreamFailed(failure))
        case .notSent(let failure):
            metrics.upstreamCall(failure.metricLabel)
            await budget.giveBack(call, now: now())
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
        if budget.isSpent(now: now()) { notes.append("the upstream budget is spent for now; only cached answers are served") }
        return notes
    }
}
