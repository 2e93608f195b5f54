import Foundation
import Logging
import PostlyKafka
import PostlyModels
import PostlyPostgres

/// What every service reads from its environment, in one place. Each variable has a
/// working local default and a line in the README.
public struct ServiceConfiguration: Sendable {
    /// The service's name, such as `posts`: its events' producer, its consumer groups, its
    /// default database `postly_<name>`, its logs and metrics.
    public let name: String
    /// `HOST`, `PORT`: where the service listens.
    public var host: String
    public var port: Int
    /// `LOG_LEVEL`: trace, debug, info (default), notice, warning, error, critical.
    public var logLevel: Logger.Level
    /// `AUTH_JWKS_URL`: the auth service's public keys.
    public var jwksURL: String
    /// `AUTH_ISSUER`: the `iss` of access tokens.
    public var issuer: String
    /// `POSTGRES_HOST`, `_PORT`, `_USER`, `_PASSWORD`, `_DATABASE` (default `postly_<name>`), `_POOL_SIZE`,
    /// `_STATEMENT_TIMEOUT_MS` (30000; 0 for none): a statement past it, lock waits included, is
    /// cancelled, and the database counts as unavailable for it (503, a consumer's later try),
    /// so a stuck lock or a stalled server holds no request and no background loop for good.
    /// A server that answers nothing at all (frozen) is given up 5 s later on our side, and a
    /// wait for a pooled connection after 10 s (`PostgresConfiguration.answerTimeout`,
    /// `leaseTimeout`).
    public var postgres: PostgresConfiguration
    /// `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, else `OTEL_EXPORTER_OTLP_ENDPOINT`: where traces go
    /// over OTLP/HTTP (the other `OTEL_*` variables as OpenTelemetry defines them, such as
    /// `OTEL_EXPORTER_OTLP_PROTOCOL`); none, no tracing at all.
    public var tracesEndpoint: String?
    /// `KAFKA_BROKERS`, `KAFKA_SESSION_TIMEOUT_MS` (default 6000, Apache Kafka's least by
    /// default; tansu holds a group's first join for half of it, so the local runner gives 2000),
    /// `KAFKA_FETCH_WAIT_MAX_MS` (default 500: Apache Kafka answers a waiting fetch as soon as
    /// a record arrives; tansu holds it the whole time, so the local runner gives 100),
    /// `KAFKA_GROUP_INSTANCE_ID` (static membership, unset by default: see
    /// `KafkaConfiguration.groupInstanceID`; the Kubernetes manifests give each pod its name).
    public var kafka: KafkaConfiguration
    /// `POSTLY_IMPORT_TOKEN`: when set, the service serves its `/internal/import/...` routes to
    /// callers presenting it as `Authorization: Bearer <token>` (`ImportGate`); unset (the
    /// default), those routes do not exist. A secret: never logged.
    public var importToken: Secret?

    /// - Parameters:
    ///   - name: the service's name, such as `posts`.
    ///   - defaultPort: the service's local port.
    public init(name: String, defaultPort: Int, environment: Environment = Environment()) {
        self.name = name
        host = environment.string("HOST", default: "127.0.0.1")
        port = environment.integer("PORT", default: defaultPort, in: 1...65_535)
        logLevel = environment.string("LOG_LEVEL").flatMap { Logger.Level(rawValue: $0.lowercased()) } ?? .info
        jwksURL = environment.string("AUTH_JWKS_URL", default: "http://127.0.0.1:8081/api/auth/jwks")
        issuer = environment.string("AUTH_ISSUER", default: "postly-auth")
        let postgresDefaults = PostgresConfiguration()
        postgres = PostgresConfiguration(
            host: environment.string("POSTGRES_HOST", default: postgresDefaults.host),
            port: environment.integer("POSTGRES_PORT", default: postgresDefaults.port, in: 1...65_535),
            user: environment.string("POSTGRES_USER", default: postgresDefaults.user),
            password: environment.secret("POSTGRES_PASSWORD"),
            database: environment.string("POSTGRES_DATABASE", default: "postly_\(name)"),
            poolSize: environment.integer("POSTGRES_POOL_SIZE", default: postgresDefaults.poolSize, in: 1...1_000),
            applicationName: "postly-\(name)")
        let statementTimeout = environment.integer("POSTGRES_STATEMENT_TIMEOUT_MS", default: 30_000, in: 0...86_400_000)
        if statementTimeout > 0 {
            postgres.settings["statement_timeout"] = "\(statementTimeout)"
            // The server cancels a slow statement itself; this is for a server that cannot.
            postgres.answerTimeout = .milliseconds(statementTimeout + 5_000)
        }
        // A wait for a connection, then a statement that times out, answer before the gateway's
        // 60 s; a pool busy that long is overloaded anyway.
        postgres.leaseTimeout = .seconds(10)
        tracesEndpoint = environment.string("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") ?? environment.string("OTEL_EXPORTER_OTLP_ENDPOINT")
        let sessionTimeout = Duration.milliseconds(environment.integer("KAFKA_SESSION_TIMEOUT_MS", default: 6000, in: 1000...300_000))
        kafka = KafkaConfiguration(
            brokers: environment.string("KAFKA_BROKERS", default: "127.0.0.1:9092"), clientID: "postly-\(name)",
            sessionTimeout: sessionTimeout, heartbeatInterval: sessionTimeout / 3,
            fetchWaitMax: .milliseconds(environment.integer("KAFKA_FETCH_WAIT_MAX_MS", default: 500, in: 10...10_000)),
            groupInstanceID: environment.string("KAFKA_GROUP_INSTANCE_ID"))
        importToken = environment.secret("POSTLY_IMPORT_TOKEN")
    }
}
