import Hummingbird
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
    /// `POSTGRES_HOST`, `POSTGRES_PORT`, `POSTGRES_USER`, `POSTGRES_PASSWORD`, `POSTGRES_DATABASE`, `POSTGRES_POOL_SIZE`.
    public var postgres: PostgresConfiguration
    /// `KAFKA_BROKERS`.
    public var kafka: KafkaConfiguration

    /// - Parameters:
    ///   - name: the service's name, such as `posts`; names its database (`postly_posts`) and Kafka client.
    ///   - defaultPort: the service's local port.
    public init(name: String, defaultPort: Int, environment: Environment = Environment()) {
        host = environment.get("HOST") ?? "127.0.0.1"
        port = environment.get("PORT", as: Int.self) ?? defaultPort
        logLevel = environment.get("LOG_LEVEL").flatMap { Logger.Level(rawValue: $0.lowercased()) } ?? .info
        jwksURL = environment.get("AUTH_JWKS_URL") ?? "http://127.0.0.1:8081/api/auth/jwks"
        issuer = environment.get("AUTH_ISSUER") ?? "postly-auth"
        postgres = PostgresConfiguration.fromEnvironment(environment.values(defaultDatabase: "postly_\(name)"))
        kafka = KafkaConfiguration.fromEnvironment(environment.values(defaultDatabase: nil))
        kafka.clientID = "postly-\(name)"
    }
}

extension Environment {
    /// The variables as a dictionary, for the wrappers' `fromEnvironment`.
    func values(defaultDatabase: String?) -> [String: String] {
        var values: [String: String] = [:]
        for name in ["POSTGRES_HOST", "POSTGRES_PORT", "POSTGRES_USER", "POSTGRES_PASSWORD", "POSTGRES_DATABASE", "POSTGRES_POOL_SIZE", "KAFKA_BROKERS"] {
            if let value = get(name) { values[name] = value }
        }
        if let defaultDatabase, values["POSTGRES_DATABASE"] == nil { values["POSTGRES_DATABASE"] = defaultDatabase }
        return values
    }
}
