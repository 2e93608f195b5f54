/// A record a consumer received. Hand it back to `KafkaConsumer.commit(_:)` once handled.
public struct KafkaMessage: Sendable, Hashable {
    public var topic: String
    public var partition: Int32
    public var offset: Int64
    /// The key as UTF-8 text (invalid bytes replaced); `nil` when the record has none.
    public var key: String?
    public var value: [UInt8]
    public var headers: [KafkaHeader]
    /// Which of its consumer's librdkafka clients delivered it (see `KafkaConsumer.commit`): a
    /// higher number is a later client, whose partitions may be new logs starting again at 0.
    public internal(set) var client = 0

    public init(topic: String, partition: Int32, offset: Int64, key: String?, value: [UInt8], headers: [KafkaHeader] = []) {
        self.topic = topic
        self.partition = partition
        self.offset = offset
        self.key = key
        self.value = value
        self.headers = headers
    }

    /// The first header of that name.
    public func header(_ name: String) -> [UInt8]? {
        headers.first { $0.name == name }?.value
    }
}
