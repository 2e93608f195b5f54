/// A record to send. The key picks the partition, so records with one key stay in order.
public struct KafkaOutgoingMessage: Sendable, Hashable {
    public var topic: String
    public var key: String?
    public var value: [UInt8]
    public var headers: [KafkaHeader]

    public init(topic: String, key: String? = nil, value: [UInt8], headers: [KafkaHeader] = []) {
        self.topic = topic
        self.key = key
        self.value = value
        self.headers = headers
    }
}
