import Foundation
import PostlyService

/// The search service's environment, read here and nowhere else.
public struct SearchConfiguration: Sendable {
    /// `HOST`, `PORT` (default 8084), `LOG_LEVEL`, `AUTH_JWKS_URL`, `AUTH_ISSUER`, `POSTGRES_*`
    /// (database `postly_search`), `KAFKA_BROKERS`.
    public var service: ServiceConfiguration

    public init(environment: Environment = Environment()) {
        service = ServiceConfiguration(name: "search", defaultPort: 8084, environment: environment)
    }
}
