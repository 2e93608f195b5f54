import Foundation
import Hummingbird
import Logging
import Metrics
import PostlyService

/// Builds the images service: the only place that constructs its dependencies. It has no
/// database; the broker is there for session revocations.
///
/// - Parameters:
///   - fetchJWKS: replaces fetching the auth service's keys (tests hand over a test key set).
///   - clock: the wall clock of the cache's freshness and the budget's windows (tests move it).
///   - metricsFactory: where the service's metrics go (tests read their own registry).
public func buildApplication(
    _ configuration: ImagesConfiguration, logger: Logger, fetchJWKS: AccessTokenVerifier.JWKSSource? = nil,
    clock now: @escaping @Sendable () -> Date = { Date() }, metricsFactory: (any MetricsFactory)? = nil
) async throws -> some ApplicationProtocol {
    let scaffold = ServiceScaffold(name: "images", configuration: configuration.service, logger: logger, fetchJWKS: fetchJWKS)
    await scaffold.prepareTopics()
    let upstream = configuration.apiKey.map { key in
        PexelsClient(
            baseURL: configuration.upstreamURL, apiKey: key, timeout: configuration.upstreamTimeout,
            httpClient: scaffold.httpClient, logger: logger)
    }
    let budget = UpstreamBudget(hourlyLimit: configuration.hourlyLimit, monthlyLimit: configuration.monthlyLimit, now: now())
    let suggestions = ImageSuggestions(
        cache: ResponseCache(maxEntries: configuration.cacheMaxEntries, maxBytes: configuration.cacheMaxBytes, ttl: configuration.cacheTTL),
        budget: budget, allowance: UserAllowance(limit: configuration.userHourlyMisses), upstream: upstream,
        metrics: ImagesMetrics(factory: metricsFactory ?? MetricsSystem.factory), now: now)
    suggestions.metrics.record(budget.remaining(now: now()), suggestions.cache.usage)

    let router = scaffold.makeRouter(
        openAPIDocument: openAPIDocument, readinessChecks: [.broker(configuration.service.kafka)],
        readinessNotes: { suggestions.readinessNotes() })
    ImagesController(suggestions: suggestions).addRoutes(to: router)

    return Application(
        router: router, configuration: scaffold.applicationConfiguration, services: scaffold.services, logger: logger)
}
