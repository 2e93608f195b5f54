import CRdKafka
import Logging

/// Topic administration. Services create Postly's topics at start, and the outbox relay again
/// when a broker lost them (tansu keeps nothing); with a provisioned cluster both find them
/// there. No client makes a topic by sending to it (`allow.auto.create.topics=false`).
public enum KafkaTopics {
    /// Creates the topics that don't exist yet; one that exists already is left as it is.
    /// They keep their events for good (`retention.ms=-1`; Kafka's default is a week): a search
    /// reindex replays them from their beginning.
    public static func create(
        _ names: [String],
        partitions: Int32 = 3,
        replicationFactor: Int16 = 1,
        configuration: KafkaConfiguration,
        timeout: Duration = .seconds(10),
        logger: Logger = Logger(label: "postly.kafka.admin")
    ) async throws {
        guard !names.isEmpty else { return }
        let context = RdKafkaCallbackContext(logger: logger)
        let result = await runBlocking {
            Result {
                try createBlocking(names, partitions: partitions, replicationFactor: replicationFactor,
                                   configuration: configuration, timeout: timeout, context: context)
            }
        }
        try result.get()
    }

    private static func createBlocking(
        _ names: [String],
        partitions: Int32,
        replicationFactor: Int16,
        configuration: KafkaConfiguration,
        timeout: Duration,
        context: RdKafkaCallbackContext
    ) throws {
        let client = try RdKafkaClient.make(RD_KAFKA_PRODUCER, properties: configuration.adminProperties, context: context)
        defer { RdKafkaClient.destroyInBackground(client, context: context) }
        let replies = rd_kafka_queue_new(client)
        defer { rd_kafka_queue_destroy(replies) }

        var newTopics: [OpaquePointer?] = []
        defer { newTopics.withUnsafeMutableBufferPointer { rd_kafka_NewTopic_destroy_array($0.baseAddress, $0.count) } }
        for name in names {
            let (topic, reason) = RdKafkaClient.withErrorText {
                rd_kafka_NewTopic_new(name, partitions, Int32(replicationFactor), $0, $1)
            }
            guard let topic else { throw KafkaError.configuration("topic \(name): \(reason)") }
            newTopics.append(topic)
            let kept = rd_kafka_NewTopic_set_config(topic, "retention.ms", "-1")
            guard kept == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError.configuration("topic \(name): \(kept.text)") }
        }
        let options = rd_kafka_AdminOptions_new(client, RD_KAFKA_ADMIN_OP_CREATETOPICS)
        defer { rd_kafka_AdminOptions_destroy(options) }
        _ = RdKafkaClient.withErrorText {
            rd_kafka_AdminOptions_set_request_timeout(options, Int32(timeout.milliseconds), $0, $1)
        }
        newTopics.withUnsafeMutableBufferPointer {
            rd_kafka_CreateTopics(client, $0.baseAddress, $0.count, options, replies)
        }
        // A little longer than the request timeout, so librdkafka's own timeout answers first.
        guard let event = rd_kafka_queue_poll(replies, Int32(timeout.milliseconds) + 1000) else {
            throw KafkaError.timedOut
        }
        defer { rd_kafka_event_destroy(event) }
        let code = rd_kafka_event_error(event)
        guard code == RD_KAFKA_RESP_ERR_NO_ERROR else {
            throw code == RD_KAFKA_RESP_ERR__TIMED_OUT ? KafkaError.timedOut : KafkaError.adminFailed(code.text)
        }
        var count = 0
        guard let result = rd_kafka_event_CreateTopics_result(event),
              let results = rd_kafka_CreateTopics_result_topics(result, &count)
        else { return }
        var failures: [String] = []
        for topicResult in UnsafeBufferPointer(start: results, count: count) {
            let code = rd_kafka_topic_result_error(topicResult)
            guard code != RD_KAFKA_RESP_ERR_NO_ERROR, code != RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS else { continue }
            let name = String(cString: rd_kafka_topic_result_name(topicResult))
            let reason = rd_kafka_topic_result_error_string(topicResult).map { String(cString: $0) } ?? code.text
            failures.append("\(name): \(reason)")
        }
        if !failures.isEmpty {
            throw KafkaError.adminFailed(failures.joined(separator: "; "))
        }
    }
}
