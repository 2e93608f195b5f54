import CRdKafka
import Logging

/// Whether a broker answers, for `/health/ready`, asked through one client kept for the
/// process's life. A client made for each check could take a whole second in
/// `rd_kafka_destroy`, and readiness waited for it after a start.
public final class KafkaBrokerProbe: Sendable {
    /// nil when the configuration cannot make a client: the broker then counts as unreachable.
    private let client: RdKafkaHandle?
    // Kept alive until after rd_kafka_destroy: the client's log callback uses it.
    private let context = RdKafkaCallbackContext(logger: Logger(label: "postly.kafka.admin"))

    public init(configuration: KafkaConfiguration) {
        client = try? RdKafkaHandle(
            client: RdKafkaClient.make(RD_KAFKA_PRODUCER, properties: configuration.adminProperties, context: context))
    }

    /// Returns when a broker answers a metadata request within `timeout`, else throws
    /// `.brokerUnavailable`.
    public func ping(timeout: Duration = .seconds(2)) async throws {
        guard let client else { throw KafkaError.brokerUnavailable }
        let code = await runBlocking {
            var metadata: UnsafePointer<rd_kafka_metadata>?
            let code = rd_kafka_metadata(client.client, 0, nil, &metadata, Int32(timeout.milliseconds))
            if let metadata { rd_kafka_metadata_destroy(metadata) }
            return code
        }
        guard code == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError.brokerUnavailable }
    }

    deinit {
        if let client { RdKafkaClient.destroyInBackground(client.client, context: context) }
    }
}
