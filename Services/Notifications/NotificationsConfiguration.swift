import Foundation
import PostlyService

/// The notifications service's environment, read here and nowhere else.
public struct NotificationsConfiguration: Sendable {
    /// `HOST`, `PORT` (default 8086), `LOG_LEVEL`, `AUTH_JWKS_URL`, `AUTH_ISSUER`, `POSTGRES_*`
    /// (database `postly_notifications`), `KAFKA_BROKERS`.
    public var service: ServiceConfiguration
    /// `NOTIFICATIONS_HEARTBEAT_SECONDS` (default 10, at most 15): how often an idle stream
    /// gets a comment line.
    public var heartbeatInterval: Duration
    /// `NOTIFICATIONS_STREAM_BUFFER` (default 64): how many events a stream may fall behind
    /// its client before it is dropped.
    public var streamCapacity: Int
    /// How long a stream ticket is valid (the contract's 60 seconds).
    public var ticketLifetime: Duration = .seconds(60)

    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        func value(_ key: String) -> String? { environment[key].flatMap { $0.isEmpty ? nil : $0 } }
        service = ServiceConfiguration(name: "notifications", defaultPort: 8086, environment: environment)
        let heartbeat = value("NOTIFICATIONS_HEARTBEAT_SECONDS").flatMap { Double($0) }.map { min(max($0, 0.05), 15) } ?? 10
        heartbeatInterval = .milliseconds(Int(heartbeat * 1000))
        streamCapacity = value("NOTIFICATIONS_STREAM_BUFFER").flatMap { Int($0) }.map { max(1, $0) } ?? 64
    }
}
