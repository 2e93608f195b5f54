import CRdKafka
import Logging

/// Where a consumer group stands against the ends of its topics, for a caller that waits until
/// the group has consumed what the topics held at one moment: a search reindex on a site whose
/// events never pause, where waiting for the replay to fall idle never ends. One client for the
/// whole wait; it asks for the group's offsets and never joins the group.
public final class KafkaGroupProgress: Sendable {
    private let client: RdKafkaHandle
    // Kept alive until after rd_kafka_destroy: the client's log callback uses it.
    private let context = RdKafkaCallbackContext(logger: Logger(label: "postly.kafka.admin"))
    private let timeout: Duration

    public init(group: String, configuration: KafkaConfiguration, timeout: Duration = .seconds(10)) throws {
        let properties = configuration.consumerProperties(groupID: group, offsetReset: .earliest).filter { $0.key != "group.instance.id" }
        client = RdKafkaHandle(client: try RdKafkaClient.make(RD_KAFKA_CONSUMER, properties: properties, context: context))
        self.timeout = timeout
    }

    deinit {
        RdKafkaClient.destroyInBackground(client.client, context: context)
    }

    /// Each partition of `topics` and its end now: the offset its next event will take. A topic
    /// the broker does not have has no partitions.
    public func ends(of topics: [String]) async throws -> [KafkaTopicPartition: Int64] {
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
                    guard topics.contains(name) else { continue }
                    for partition in UnsafeBufferPointer(start: topic.partitions, count: Int(topic.partition_cnt)) {
                        var low: Int64 = 0, high: Int64 = 0
                        let code = rd_kafka_query_watermark_offsets(client.client, topic.topic, partition.id, &low, &high, milliseconds)
                        guard code == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError.adminFailed("\(name) [\(partition.id)]: \(code.text)") }
                        ends[KafkaTopicPartition(topic: name, partition: partition.id)] = high
                    }
                }
                return ends
            }
        }.get()
    }

    /// Whether the group has committed, in each partition of `ends`, at least its offset there
    /// (a partition it never committed in has reached only an end of 0).
    public func hasReached(_ ends: [KafkaTopicPartition: Int64]) async throws -> Bool {
        guard ends.values.contains(where: { $0 > 0 }) else { return true }
        let (client, milliseconds) = (client, Int32(timeout.milliseconds))
        return try await runBlocking {
            Result { () throws -> Bool in
                guard let list = rd_kafka_topic_partition_list_new(Int32(ends.count)) else { throw KafkaError.adminFailed("no memory") }
                defer { rd_kafka_topic_partition_list_destroy(list) }
                for partition in ends.keys { rd_kafka_topic_partition_list_add(list, partition.topic, partition.partition) }
                let code = rd_kafka_committed(client.client, list, milliseconds)
                guard code == RD_KAFKA_RESP_ERR_NO_ERROR else {
                    throw code == RD_KAFKA_RESP_ERR__TIMED_OUT ? KafkaError.timedOut : KafkaError.adminFailed(code.text)
                }
                for element in UnsafeBufferPointer(start: list.pointee.elems, count: Int(list.pointee.cnt)) {
                    let partition = KafkaTopicPartition(topic: String(cString: element.topic), partition: element.partition)
                    if element.err != RD_KAFKA_RESP_ERR_NO_ERROR { throw KafkaError.adminFailed(element.err.text) }
                    if max(element.offset, 0) < ends[partition] ?? 0 { return false }
                }
                return true
            }
        }.get()
    }
}
