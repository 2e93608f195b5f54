import Foundation
import Logging
import Metrics
import PostlyKafka
import PostlyModels
import PostlyPostgres
import ServiceLifecycle

/// Runs one consumer group of a service: decodes each message's envelope, applies it with
/// the handler in a database transaction, and commits the Kafka offset only after that
/// transaction committed. An event whose `sequence` is not newer than the last one applied
/// for its key changes nothing (redelivery, replay, reordering). A message that cannot be
/// decoded, or that the handler fails on for good, goes to `postly.deadletter` with the
/// reason, and the partition moves on. While the database is unreachable, the runner
/// retries the same message; it never skips one for that.
public final class EventConsumerRunner: Service {
    private let name: String
    private let topics: [Topic]
    private let database: Database
    private let kafka: KafkaConfiguration
    private let deadLetters: KafkaProducer
    private let handler: any EventHandler
    private let logger: Logger
    private let applied: Counter
    private let skipped: Counter
    private let deadLettered: Counter

    /// - Parameter name: the consumer group, such as `comments`; also names the applied
    ///   sequences, so two runners of one service keep theirs apart.
    public init(
        name: String, topics: [Topic], database: Database, kafka: KafkaConfiguration, deadLetters: KafkaProducer,
        handler: any EventHandler, logger: Logger
    ) {
        self.name = name
        self.topics = topics
        self.database = database
        self.kafka = kafka
        self.deadLetters = deadLetters
        self.handler = handler
        self.logger = logger
        self.applied = Counter(label: "postly_events_applied_total", dimensions: [("consumer", name)])
        self.skipped = Counter(label: "postly_events_skipped_total", dimensions: [("consumer", name)])
        self.deadLettered = Counter(label: "postly_events_deadlettered_total", dimensions: [("consumer", name)])
    }

    public func run() async throws {
        let consumer = try KafkaConsumer(configuration: kafka, groupID: name, topics: topics.map(\.rawValue), logger: logger)
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask { try await consumer.run() }
            for try await message in consumer.messages {
                try await handle(message)
                try await consumer.commit(message)
            }
        }
    }

    /// Applies or dead-letters one message; returns once its effect is durable.
    func handle(_ message: KafkaMessage) async throws {
        let event: Event
        do {
            event = try decoder.decode(Event.self, from: Data(message.value))
        } catch {
            try await deadLetter(message, reason: "undecodable event: \(error)")
            return
        }
        var backoff = Duration.milliseconds(100)
        while true {
            do {
                try await apply(event)
                return
            } catch let error as DatabaseError where error.isTransient {
                // Not this message's fault: wait for the database, keep the place.
                guard !Task.isCancelled, !Task.isShuttingDownGracefully else { throw error }
                logger.warning("cannot apply event; retrying", metadata: ["event": "\(event.id)", "error": "\(error)"])
                await sleepUnlessShuttingDown(for: backoff)
                backoff = min(backoff * 2, .seconds(5))
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                try await deadLetter(message, reason: "handler failed on \(event.type.rawValue) \(event.id): \(error)")
                return
            }
        }
    }

    private func apply(_ event: Event) async throws {
        let isNew = try await database.transaction { connection in
            // Records the sequence and tells whether it is newer, in one statement.
            let newer = try await connection.query(
                """
                INSERT INTO consumed_sequences (consumer, topic, key, sequence)
                VALUES (\(name), \(event.topic.rawValue), \(event.key), \(event.sequence))
                ON CONFLICT (consumer, topic, key) DO UPDATE SET sequence = EXCLUDED.sequence
                WHERE consumed_sequences.sequence < EXCLUDED.sequence
                RETURNING sequence
                """)
            guard !newer.isEmpty else { return false }
            try await handler.apply(event, in: connection)
            return true
        }
        (isNew ? applied : skipped).increment()
    }

    private func deadLetter(_ message: KafkaMessage, reason: String) async throws {
        logger.error(
            "dead-lettering a message",
            metadata: ["topic": "\(message.topic)", "partition": "\(message.partition)", "offset": "\(message.offset)", "reason": "\(reason)"])
        _ = try await deadLetters.send(
            KafkaOutgoingMessage(
                topic: Topic.deadLetter.rawValue, key: message.key, value: message.value,
                headers: [
                    KafkaHeader(name: "reason", value: reason),
                    KafkaHeader(name: "consumer", value: name),
                    KafkaHeader(name: "source", value: "\(message.topic)/\(message.partition)/\(message.offset)"),
                ]))
        deadLettered.increment()
    }

    private let decoder = PostlyJSON.decoder()
}
