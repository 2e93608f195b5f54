import Testing

@testable import PostlyEvents
@testable import PostlyKafka

/// How far a runner has come counts only what its current Kafka client delivered: after the
/// broker lost its logs, the offsets of the new logs start again at 0, and the old ones made
/// a reindex take a replay for caught up before it had applied anything of them.
struct HandledOffsetsTests {
    func message(partition: Int32, offset: Int64, client: Int) -> KafkaMessage {
        var message = KafkaMessage(topic: "postly.posts", partition: partition, offset: offset, key: nil, value: [])
        message.client = client
        return message
    }

    @Test func offsetsOfAnEarlierClientAreForgotten() {
        var handled = HandledOffsets()
        handled.record([message(partition: 0, offset: 9_999, client: 1), message(partition: 1, offset: 4, client: 1)])
        #expect(handled.offsets == [KafkaTopicPartition(topic: "postly.posts", partition: 0): 10_000, KafkaTopicPartition(topic: "postly.posts", partition: 1): 5])
        handled.record([message(partition: 0, offset: 2, client: 2)])
        #expect(handled.offsets == [KafkaTopicPartition(topic: "postly.posts", partition: 0): 3])
        // A batch of the earlier client finishing late counts for nothing.
        handled.record([message(partition: 1, offset: 50, client: 1), message(partition: 0, offset: 1, client: 2)])
        #expect(handled.offsets == [KafkaTopicPartition(topic: "postly.posts", partition: 0): 3])
    }
}
