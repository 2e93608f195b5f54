import Foundation
import PostlyService

/// The posts service's environment, read in one place.
public struct PostsConfiguration: Sendable {
    /// `HOST`, `PORT` (default 8082), `POSTGRES_*` (database `postly_posts`), `KAFKA_BROKERS`, `AUTH_*`, `LOG_LEVEL`.
    public var service: ServiceConfiguration
    /// `POSTS_VIEW_FLUSH_INTERVAL_MS`: how often counted views are written (default 1000).
    public var viewFlushInterval: Duration

    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        service = ServiceConfiguration(name: "posts", defaultPort: 8082, environment: environment)
        let milliseconds = environment["POSTS_VIEW_FLUSH_INTERVAL_MS"].flatMap { Int($0) }.map { max(10, $0) } ?? 1000
        viewFlushInterval = .milliseconds(milliseconds)
    }
}
