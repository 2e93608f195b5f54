import PostlyKafka

extension KafkaProducer: EventPublisher {
    public func publish(_ messages: [KafkaOutgoingMessage]) async -> [Result<Void, any Error>] {
        await send(messages).map { $0.map { _ in } }
    }
}
