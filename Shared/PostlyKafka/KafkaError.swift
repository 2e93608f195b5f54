/// What can go wrong talking to Kafka, in the terms a caller acts on.
public enum KafkaError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A property librdkafka rejected, or a client it could not create.
    case configuration(String)
    /// The broker refused the message or librdkafka gave up on it for a reason other
    /// than time.
    case deliveryFailed(String)
    /// No acknowledgement within the configured time (for a send: `messageTimeout`).
    case timedOut
    /// No broker could be reached.
    case brokerUnavailable
    /// The broker does not have the record's topic. Clients never create topics by sending to
    /// them (`allow.auto.create.topics=false`): `KafkaTopics.create` does, with the project's
    /// partition count.
    case unknownTopic
    /// The client was shut down; nothing more can be sent or committed with it.
    case closed
    /// The broker did not accept an offset commit (for example after the partition was
    /// given to another consumer of the group).
    case commitFailed(String)
    /// Topic administration failed.
    case adminFailed(String)
    /// librdkafka raised a fatal error: this client instance can do nothing more.
    case fatal(String)

    public var description: String {
        switch self {
        case .configuration(let reason): "Kafka configuration: \(reason)"
        case .deliveryFailed(let reason): "Kafka delivery failed: \(reason)"
        case .timedOut: "Kafka: timed out"
        case .brokerUnavailable: "Kafka: no broker reachable"
        case .unknownTopic: "Kafka: the broker does not have the topic"
        case .closed: "Kafka: client closed"
        case .commitFailed(let reason): "Kafka offset commit failed: \(reason)"
        case .adminFailed(let reason): "Kafka admin request failed: \(reason)"
        case .fatal(let reason): "Kafka fatal error: \(reason)"
        }
    }
}
