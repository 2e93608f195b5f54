import Foundation
import Logging
import PostlyKafka
import PostlyPostgres

/// What every service reads from its environment, in one place. Each variable has a
/// working local default and a line in the README.
public struct ServiceConfiguration: Sendable {
    /// `HOST`, `PORT`: where the service listens.
    public var host: String
    public var port: Int
    /// `LOG_LEVEL`: trace, debug, info (default), notice, warning, error, critical.
    public var logLevel: Logger.Level
    /// `AUTH_JWKS_URL`: the auth service's public keys.
    public var jwksURL: String
    /// `AUTH_ISSUER`: the `iss` of access tokens.
    public var issuer: String
    /// `POSTGRES_HOST`, `_PORT`, `_USER`, `_PASSWORD`, `_DATABASE` (default `postly_<name>`), `_POOL_SIZE`.
    public var postgres: PostgresConfiguration
    /// `KAFKA_BROKERS`.
    public var kafka: KafkaConfiguration

    /// - Parameters:
    ///   - name: the service's name, such as `posts`.
    ///   - defaultPort: the service's local port.
    public init(name: String, defaultPort: Int, environment: [String: String] = ProcessInfo.processInfo.environment) {
        func value(_ key: String) -> String? { environment[key].flatMap { $0.isEmpty ? nil : $0 } }
        host = value("HOST") ?? "127.0.0.1"
        port = value("PORT").flatMap { Int($0) } ?? defaultPort
        logLevel = value("LOG_LEVEL").flatMap { Logger.Level(rawValue: $0.lowercased()) } ?? .info
        jwksURL = value("AUTH_JWKS_URL") ?? "http://127.0.0.1:8081/api/auth/jwks"
        issuer = value("AUTH_ISSUER") ?? "postly-auth"
        var postgresEnvironment = environment
        if value("POSTGRES_DATABASE") == nil { postgresEnvironment["POSTGRES_DATABASE"] = "postly_\(name)" }
        postgres = PostgresConfiguration.fromEnvironment(environment: postgresEnvironment, applicationName: "postly-\(name)")
        kafka = KafkaConfiguration.fromEnvironment(environment, clientID: "postly-\(name)")
    }
}
