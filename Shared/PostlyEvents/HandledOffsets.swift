import PostlyKafka

/// Per partition, the offset after the last message a runner handled (applied, skipped or
/// dead-lettered) once its effects were durable, as its current Kafka client numbers them. A
/// later client (the consumer replaced one after the broker lost its logs) reads new logs that
/// start again at 0, so what earlier clients delivered is forgotten and never counted again.
struct HandledOffsets {
    private(set) var offsets: [KafkaTopicPartition: Int64] = [:]
    private var client = 0

    mutating func record(_ batch: [KafkaMessage]) {
        for message in batch {
            guard message.client >= client else { continue }
            if message.client > client {
                offsets = [:]
                client = message.client
            }
            let partition = KafkaTopicPartition(topic: message.topic, partition: message.partition)
            offsets[partition] = max(offsets[partition] ?? 0, message.offset + 1)
        }
    }
}
