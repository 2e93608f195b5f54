/// One Kafka record header. Names may repeat; order is kept.
public struct KafkaHeader: Sendable, Hashable {
    public var name: String
    public var value: [UInt8]

    public init(name: String, value: [UInt8]) {
        self.name = name
        self.value = value
    }

    public init(name: String, value: String) {
        self.init(name: name, value: Array(value.utf8))
    }
}
