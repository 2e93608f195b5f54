import Foundation
import PostlyService

/// The notifications service's environment, read here and nowhere else.
public struct NotificationsConfiguration: Sendable {
    /// `HOST`, `PORT` (default 8086), `LOG_LEVEL`, `AUTH_JWKS_URL`, `AUTH_ISSUER`, `POSTGRES_*`
    /// (database `postly_notifications`), `KAFKA_BROKERS`.
    public var service: ServiceConfiguration
    /// `NOTIFICATIONS_HEARTBEAT_MS` (default 10000, at most 15000): how often an idle stream
    /// gets a comment line.
    public var heartbeatInterval: Duration
    /// `NOTIFICATIONS_STREAM_BUFFER` (default 64): how many events a stream may fall behind
    /// its client before it is dropped.
    public var streamCapacity: Int
    /// `NOTIFICATIONS_STREAMS_PER_USER` (default 5): streams one user may have open, on all
    /// instances together; one more closes the user's oldest.
    public var streamsPerUser: Int
    /// How long a stream ticket is valid (the contract's 60 seconds).
    public var ticketLifetime: Duration = .seconds(60)

    public init(environment: Environment = Environment()) {
        service = ServiceConfiguration(name: "notifications", defaultPort: 8086, environment: environment)
        heartbeatInterval = .milliseconds(environment.integer("NOTIFICATIONS_HEARTBEAT_MS", default: 10_000, in: 50...15_000))
        streamCapacity = environment.integer("NOTIFICATIONS_STREAM_BUFFER", default: 64, in: 1...Int.max)
        streamsPerUser = environment.integer("NOTIFICATIONS_STREAMS_PER_USER", default: 5, in: 1...1_000)
    }
}
