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

    /// The one check `/health/serving` leaves out: with the broker down, writes still succeed
    /// into the outbox.
    public static let brokerName = "broker"

    public static func database(_ database: Database) -> ReadinessCheck {
        ReadinessCheck(name: "database") { try await database.ping() }
    }

    /// The auth service's keys are known (fetched once; kept when a later fetch fails), so a
    /// caller's token can be checked: a service started before auth could answer 503 to
    /// every signed-in request until its next fetch, while it said it was ready.
    public static func tokenKeys(_ verifier: AccessTokenVerifier) -> ReadinessCheck {
        ReadinessCheck(name: "auth keys") {
            guard verifier.hasKeys else { throw NoKeys() }
        }
    }

    struct NoKeys: Error {}

    public static func broker(_ kafka: KafkaConfiguration) -> ReadinessCheck {
        let probe = KafkaBrokerProbe(configuration: kafka)
        return ReadinessCheck(name: brokerName) { try await probe.ping() }
    }
}
