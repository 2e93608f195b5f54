import Foundation
import PostlyService

/// The search service's environment, read here and nowhere else.
public struct SearchConfiguration: Sendable {
    /// `HOST`, `PORT` (default 8084), `LOG_LEVEL`, `AUTH_JWKS_URL`, `AUTH_ISSUER`, `POSTGRES_*`
    /// (database `postly_search`), `KAFKA_BROKERS`.
    public var service: ServiceConfiguration
    /// `SEARCH_CONTENT_CACHE_MB` (default 256): how much of the posts' contents searches keep in
    /// memory (`ContentCache`); the rest is read from the database for the page.
    public var contentCacheBytes: Int

    public init(environment: Environment = Environment()) {
        service = ServiceConfiguration(name: "search", defaultPort: 8084, environment: environment)
        contentCacheBytes = environment.integer("SEARCH_CONTENT_CACHE_MB", default: 256, in: 0...65_536) << 20
        // The search statement's plan is the same whatever its words; planning it for each
        // search cost more than a third of its execution.
        service.postgres.settings["plan_cache_mode"] = "force_generic_plan"
    }
}
