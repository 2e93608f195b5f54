import PostlyKafka

/// Where the outbox relay sends events: Kafka in production. A protocol so a test can
/// interrupt the relay between publishing and marking.
public protocol EventPublisher: Sendable {
    /// Publishes `messages` in the given order (one key's messages stay in order) and
    /// returns each one's outcome, after the broker's delivery reports.
    func publish(_ messages: [KafkaOutgoingMessage]) async -> [Result<Void, any Error>]
}
