import PostlyKafka
import PostlyPostgres

/// One dependency that `/health/ready` reports on; `ReadinessMonitor` runs the checks in the
/// background.
public struct ReadinessCheck: Sendable {
    public var name: String
    public var check: @Sendable () async throws -> Void

    public init(name: String, check: @escaping @Sendable () async throws -> Void) {
        self.name = name
        self.check = check
    }

    /// The check `/health/serving` asks about.
    public static let databaseName = "database"

    public static func database(_ database: Database) -> ReadinessCheck {
        ReadinessCheck(name: databaseName) { try await database.ping() }
    }

    public static func broker(_ kafka: KafkaConfiguration) -> ReadinessCheck {
        let probe = KafkaBrokerProbe(configuration: kafka)
        return ReadinessCheck(name: "broker") { try await probe.ping() }
    }
}
