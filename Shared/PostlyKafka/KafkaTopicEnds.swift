import CRdKafka
import Logging

/// The ends of topics' partitions, for a caller that waits until a consumer has consumed what
/// the topics held at one moment: a search reindex on a site whose events never pause, where
/// waiting for its replay to fall idle never ends. One client for the caller's life.
public final class KafkaTopicEnds: Sendable {
    private let client: RdKafkaHandle
    // Kept alive until after rd_kafka_destroy: the client's log callback uses it.
    private let context = RdKafkaCallbackContext(logger: Logger(label: "postly.kafka.admin"))
    private let timeout: Duration

    public init(configuration: KafkaConfiguration, timeout: Duration = .seconds(10)) throws {
        client = RdKafkaHandle(client: try RdKafkaClient.make(RD_KAFKA_PRODUCER, properties: configuration.adminProperties, context: context))
        self.timeout = timeout
    }

    deinit {
        RdKafkaClient.destroyInBackground(client.client, context: context)
    }

    /// Each partition of `topics` that holds an event, and its end now: the offset its next
    /// event will take. A topic the broker does not have has none; any other error throws.
    public func now(of topics: [String]) async throws -> [KafkaTopicPartition: Int64] {
        let (client, milliseconds) = (client, Int32(timeout.milliseconds))
        return try await runBlocking {
            Result { () throws -> [KafkaTopicPartition: Int64] in
                var metadata: UnsafePointer<rd_kafka_metadata>?
                let code = rd_kafka_metadata(client.client, 1, nil, &metadata, milliseconds)
                guard code == RD_KAFKA_RESP_ERR_NO_ERROR, let metadata else { throw KafkaError.brokerUnavailable }
                defer { rd_kafka_metadata_destroy(metadata) }
                var ends: [KafkaTopicPartition: Int64] = [:]
                for topic in UnsafeBufferPointer(start: metadata.pointee.topics, count: Int(metadata.pointee.topic_cnt)) {
                    let name = String(cString: topic.topic)
                    guard topics.contains(name), topic.err != RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART else { continue }
                    guard topic.err == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError.adminFailed("\(name): \(topic.err.text)") }
                    for partition in UnsafeBufferPointer(start: topic.partitions, count: Int(topic.partition_cnt)) {
                        var low: Int64 = 0, high: Int64 = 0
                        let code = rd_kafka_query_watermark_offsets(client.client, topic.topic, partition.id, &low, &high, milliseconds)
                        guard code == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError.adminFailed("\(name) [\(partition.id)]: \(code.text)") }
                        if high > low { ends[KafkaTopicPartition(topic: name, partition: partition.id)] = high }
                    }
                }
                return ends
            }
        }.get()
    }
}
