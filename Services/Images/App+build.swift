import Foundation
import Hummingbird
import Logging
import Metrics
import PostlyService

/// Builds the images service: the only place that constructs its dependencies.
///
/// - Parameters:
///   - clock: the wall clock of the cache's freshness and the budget's windows (tests move it).
///   - metricsFactory: where the service's metrics go (tests read their own registry).
public func buildApplication(
    _ configuration: ImagesConfiguration, logger: Logger, options: ServiceKit.Options = .init(),
    clock now: @escaping @Sendable () -> Date = { Date() }, metricsFactory: (any MetricsFactory)? = nil
) throws -> some ApplicationProtocol {
    let kit = try ServiceKit(configuration.service, schema: schema, logger: logger, options: options)
    let upstream = configuration.apiKey.map { key in
        PexelsClient(
            baseURL: configuration.upstreamURL, apiKey: key, timeout: configuration.upstreamTimeout,
            httpClient: kit.httpClient, logger: logger)
    }
    let budget = UpstreamBudget(
        hourlyLimit: configuration.hourlyLimit, monthlyLimit: configuration.monthlyLimit, userHourlyLimit: configuration.userHourlyMisses,
        database: kit.database)
    let suggestions = ImageSuggestions(
        cache: ResponseCache(maxEntries: configuration.cacheMaxEntries, maxBytes: configuration.cacheMaxBytes, ttl: configuration.cacheTTL),
        budget: budget, upstream: upstream, metrics: ImagesMetrics(factory: metricsFactory ?? MetricsSystem.factory), now: now)
    return kit.application(router: buildRouter(kit, suggestions: suggestions))
}

/// The images routes on the kit's middleware. Builds without touching the database.
func buildRouter(_ kit: ServiceKit, suggestions: ImageSuggestions) -> Router<PostlyRequestContext> {
    let router = kit.makeRouter(openAPI: openAPI, readinessNotes: { suggestions.readinessNotes() })
    ImagesController(suggestions: suggestions).addRoutes(to: router)
    return router
}
