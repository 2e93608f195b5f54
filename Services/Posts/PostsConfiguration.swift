import Foundation
import PostlyService

/// The posts service's environment, read in one place.
public struct PostsConfiguration: Sendable {
    /// `HOST`, `PORT` (default 8082), `POSTGRES_*` (database `postly_posts`), `KAFKA_BROKERS`, `AUTH_*`, `LOG_LEVEL`.
    public var service: ServiceConfiguration
    /// `POSTS_VIEW_FLUSH_INTERVAL_MS`: how often counted views are written (default 1000).
    public var viewFlushInterval: Duration
    /// `POSTS_CACHE_LIFETIME_MS`: how long a post read from the database answers reads without
    /// it (default 1000, the contract's "within 1 second" for another instance's changes; 0
    /// turns the cache off). This instance's own changes drop their posts at once.
    public var cacheLifetime: Duration
    /// `POSTS_CACHE_MIB`: about how much post text the cache holds at most (default 32).
    public var cacheBytes: Int

    public init(environment: Environment = Environment()) {
        service = ServiceConfiguration(name: "posts", defaultPort: 8082, environment: environment)
        viewFlushInterval = environment.milliseconds("POSTS_VIEW_FLUSH_INTERVAL_MS", default: 1000, minimum: 10)
        cacheLifetime = environment.milliseconds("POSTS_CACHE_LIFETIME_MS", default: 1000, minimum: 0)
        cacheBytes = environment.integer("POSTS_CACHE_MIB", default: 32, in: 1...4096) << 20
    }
}
