import Logging
import PostlyKafka
import PostlyModels

extension KafkaProducer: EventPublisher {
    /// Sends `messages`. A broker that came back without its topics (tansu keeps nothing)
    /// answers `.unknownTopic`: then Postly's topics are created, all of them with the one
    /// partition count, and the messages that failed for it are sent once more.
    public func publish(_ messages: [KafkaOutgoingMessage]) async -> [Result<Void, any Error>] {
        var results = await send(messages)
        let missing = results.indices.filter {
            if case .failure(KafkaError.unknownTopic) = results[$0] { true } else { false }
        }
        if !missing.isEmpty {
            let logger = Logger(label: "postly.kafka.topics")
            do {
                try await KafkaTopics.create(Topic.allCases.map(\.rawValue), configuration: configuration, timeout: .seconds(5), logger: logger)
                logger.warning("the broker had lost its topics; created them again", metadata: ["kafka.topics": "\(Topic.allCases.map(\.rawValue))"])
                let again = await send(missing.map { messages[$0] })
                for (index, result) in zip(missing, again) {
                    results[index] = result
                }
            } catch {
                // The relay retries the batch.
                logger.warning("could not create the missing topics", metadata: ["error": "\(error)"])
            }
        }
        return results.map { $0.map { _ in } }
    }
}
