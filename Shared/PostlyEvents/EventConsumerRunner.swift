import Foundation
import Logging
import Metrics
import PostlyKafka
import PostlyModels
import PostlyPostgres
import ServiceLifecycle
import Tracing

/// Runs one consumer group of a service: decodes each message's envelope, applies it with
/// the handler in a database transaction, and commits the Kafka offset only after that
/// transaction committed. An event whose `sequence` is not newer than the last one applied
/// for its key changes nothing (redelivery, replay, reordering). A message that cannot be
/// decoded, or that the handler fails on for good, goes to `postly.deadletter` with the
/// reason, and the partition moves on. While the database is unreachable, the runner
/// retries the same message; it never skips one for that.
///
/// Messages already waiting when one arrives (up to `maxBatch`) are applied together in one
/// transaction, each still with its own sequence check, and their offsets are committed after
/// it. When any of them fails, the batch is rolled back and its messages are applied one at
/// a time, so one bad event never takes its batch-mates to the dead letters.
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
    private let maxBatch: Int

    /// - Parameter name: the consumer group, such as `comments`; also names the applied
    ///   sequences, so two runners of one service keep theirs apart.
    public init(
        name: String, topics: [Topic], database: Database, kafka: KafkaConfiguration, deadLetters: KafkaProducer,
        handler: any EventHandler, logger: Logger, maxBatch: Int = 64
    ) {
        self.name = name
        self.topics = topics
        self.database = database
        self.kafka = kafka
        self.deadLetters = deadLetters
        self.handler = handler
        self.logger = logger
        self.maxBatch = max(1, maxBatch)
        self.applied = Counter(label: "postly_events_applied_total", dimensions: [("consumer", name)])
        self.skipped = Counter(label: "postly_events_skipped_total", dimensions: [("consumer", name)])
        self.deadLettered = Counter(label: "postly_events_deadlettered_total", dimensions: [("consumer", name)])
    }

    public func run() async throws {
        let consumer = try KafkaConsumer(configuration: kafka, groupID: name, topics: topics.map(\.rawValue), logger: logger)
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask { try await consumer.run() }
            var messages = consumer.messages.makeAsyncIterator()
            while case let batch = await messages.nextBatch(upTo: maxBatch), !batch.isEmpty {
                try await handle(batch)
                // The last message of each partition: its commit covers the ones before it.
                var last: [String: KafkaMessage] = [:]
                for message in batch { last["\(message.topic)/\(message.partition)"] = message }
                for message in last.values { await commit(message, with: consumer) }
            }
        }
    }

    /// Commits `message`'s offset. A commit that fails (the broker has put this consumer out
    /// of its group: a process paused or starved past its session, a rebalance) loses
    /// nothing: the batch is durable, the consumer rejoins, and whatever the group hands it
    /// again is dropped by the sequence check. Only the end of the consumer ends the runner.
    private func commit(_ message: KafkaMessage, with consumer: KafkaConsumer) async {
        do {
            try await consumer.commit(message)
        } catch KafkaError.closed {
            // Shutting down: the next consumer starts at the last commit that got through.
        } catch {
            logger.warning(
                "cannot commit an applied event's offset; it may come again and change nothing",
                metadata: ["topic": "\(message.topic)", "partition": "\(message.partition)", "offset": "\(message.offset)", "error": "\(error)"])
        }
    }

    /// Applies or dead-letters every message of `batch`; returns once all effects are durable.
    func handle(_ batch: [KafkaMessage]) async throws {
        var decoded: [(message: KafkaMessage, event: Event)] = []
        for message in batch {
            do {
                decoded.append((message, try decoder.decode(Event.self, from: Data(message.value))))
            } catch {
                try await deadLetter(message, reason: "undecodable event: \(error)")
            }
        }
        if decoded.count > 1 {
            do {
                let newer = try await database.transaction { connection in
                    var newer: [Bool] = []
                    for (_, event) in decoded { newer.append(try await apply(event, in: connection)) }
                    return newer
                }
                for isNew in newer { (isNew ? applied : skipped).increment() }
                return
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                // Rolled back whole: one at a time below, each with its own retries and dead letter.
                logger.debug("a batch failed; applying its events one at a time", metadata: ["error": "\(error)"])
            }
        }
        for (message, event) in decoded { try await handle(message, event: event) }
    }

    /// Applies `event`, read from `message`, in a transaction of its own: retried while the
    /// database is unreachable, dead-lettered when the handler fails on it for good.
    private func handle(_ message: KafkaMessage, event: Event) async throws {
        var backoff = Duration.milliseconds(100)
        while true {
            do {
                let isNew = try await database.transaction { connection in try await apply(event, in: connection) }
                (isNew ? applied : skipped).increment()
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

    /// Applies `event` in `connection`'s transaction if its sequence is newer than the one
    /// recorded for its key; tells whether it was. A consumer span in the trace the event
    /// carries, and a log line with its trace id when it carries one.
    private func apply(_ event: Event, in connection: DatabaseConnection) async throws -> Bool {
        try await withSpan("apply \(event.type.rawValue)", context: EventTraceContext.context(of: event), ofKind: .consumer) { span in
            span.attributes["messaging.system"] = "kafka"
            span.attributes["messaging.destination.name"] = event.topic.rawValue
            span.attributes["messaging.consumer.group.name"] = name
            span.attributes["messaging.message.id"] = event.id.uuidString.lowercased()
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
            if event.traceparent != nil {
                logger.info("applied a traced event", metadata: ["event": "\(event.id)", "type": "\(event.type.rawValue)"])
            }
            return true
        }
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
