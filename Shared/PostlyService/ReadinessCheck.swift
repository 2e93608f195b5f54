import PostlyKafka
import PostlyPostgres

/// One dependency that `/health/ready` checks. A check must give up within
/// `ReadinessCheck.timeout` by itself: blocking C calls cannot be cancelled, and a readiness
/// probe that waits longer than its checker's timeout (2 s in `deploy/up.sh`) says nothing.
public struct ReadinessCheck: Sendable {
    /// How long `/health/ready` waits for every check together.
    public static let timeout = Duration.milliseconds(450)

    public var name: String
    public var check: @Sendable () async throws -> Void

    public init(name: String, check: @escaping @Sendable () async throws -> Void) {
        self.name = name
        self.check = check
    }

    public static func database(_ database: Database) -> ReadinessCheck {
        ReadinessCheck(name: "database") { try await database.ping() }
    }

    public static func broker(_ kafka: KafkaConfiguration) -> ReadinessCheck {
        ReadinessCheck(name: "broker") { try await KafkaTopics.ping(configuration: kafka, timeout: .milliseconds(400)) }
    }
}
