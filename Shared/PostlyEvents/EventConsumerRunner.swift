import Foundation
import Logging
import Metrics
import PostlyKafka
import PostlyModels
import PostlyPostgres
import ServiceLifecycle
import Synchronization
import Tracing

/// Runs one consumer group of a service: decodes each message's envelope, applies it with
/// the handler in a database transaction, and commits the Kafka offset only after that
/// transaction committed. An event whose `sequence` is not newer than the last one applied
/// for its key changes nothing (redelivery, replay, reordering). A message that cannot be
/// decoded, or that the handler fails on for good, goes to `postly.deadletter` with the
/// reason, and the partition moves on. While the database cannot apply it (unreachable, out
/// of resources, a statement timed out), the runner retries the same message; it never
/// skips one for that.
///
/// Messages already waiting when one arrives (up to `maxBatch`) are applied together in one
/// transaction, each still with its own sequence check (two statements for the batch), by a
/// `BatchEventHandler` all at once, and their offsets are committed after it. When any of them
/// fails, the batch is rolled back and its messages are applied one at a time, so one bad event
/// never takes its batch-mates to the dead letters.
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
    private let handled = Mutex(HandledOffsets())

    /// How far the runner has come (`HandledOffsets`), for a caller waiting until it consumed
    /// what a topic held: its commits to the broker may lag or fail.
    public var handledOffsets: [KafkaTopicPartition: Int64] { handled.withLock { $0.offsets } }

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
            // A batch's offsets are committed while the next batch is applied: the broker's
            // answer (tens of milliseconds on a busy machine) is off the path of the events behind
            // it. Commits still go one at a time, in order.
            var committing: Task<Void, Never>?
            while case let batch = await messages.nextBatch(upTo: maxBatch), !batch.isEmpty {
                try await handle(batch)
                handled.withLock { $0.record(batch) }
                await committing?.value
                committing = Task { await commit(batch, with: consumer) }
            }
            await committing?.value
        }
    }

    /// Commits the offsets of `batch`, in one request. A commit that fails (the broker has put
    /// this consumer out of its group: a process paused or starved past its session, a
    /// rebalance) loses nothing: the batch is durable, the consumer rejoins, and whatever the
    /// group hands it again is dropped by the sequence check. Only the end of the consumer ends
    /// the runner.
    private func commit(_ batch: [KafkaMessage], with consumer: KafkaConsumer) async {
        do {
            try await consumer.commit(batch)
        } catch KafkaError.closed {
            // Shutting down: the next consumer starts at the last commit that got through.
        } catch {
            logger.warning(
                "cannot commit applied events' offsets; they may come again and change nothing",
                metadata: ["events": "\(batch.count)", "error": "\(error)"])
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
                let newer = try await database.transaction { connection in try await apply(decoded.map(\.event), in: connection) }
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
    /// database cannot apply it (not this message's fault: the place is kept), dead-lettered
    /// when the handler fails on it for good.
    private func handle(_ message: KafkaMessage, event: Event) async throws {
        do {
            let isNew = try await untilItSucceeds("cannot apply event; retrying", metadata: ["event": "\(event.id)"]) {
                try await database.transaction { connection in try await apply([event], in: connection) }
            } retrying: { Self.mayApplyLater($0) }
            (isNew[0] ? applied : skipped).increment()
        } catch let error where Self.mayApplyLater(error) {
            throw error  // stopping
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            try await deadLetter(message, reason: "handler failed on \(event.type.rawValue) \(event.id): \(error)")
        }
    }

    /// Whether applying an event failed through no fault of its own: the database cannot do it
    /// now, or its schema is another release's (a rolling update: the event waits for the
    /// schema, where it was dead-lettered for good).
    private static func mayApplyLater(_ error: any Error) -> Bool {
        guard let error = error as? DatabaseError else { return false }
        return error.isUnavailable || error.isSchemaMismatch
    }

    /// `attempt`'s result once it succeeds; after each failure that `retrying` lets pass, the
    /// wait doubles (100 ms, at most 5 s). Any other failure is thrown, and the last one once the
    /// service stops.
    private func untilItSucceeds<T>(
        _ warning: Logger.Message, metadata: Logger.Metadata, _ attempt: () async throws -> T, retrying: (any Error) -> Bool
    ) async throws -> T {
        var backoff = Backoff()
        while true {
            do {
                return try await attempt()
            } catch where retrying(error) && !Task.isCancelled && !Task.isShuttingDownGracefully {
                logger.warning(warning, metadata: metadata.merging(["error": "\(error)"]) { $1 })
                await backoff.pause()
            }
        }
    }

    /// Applies, in `connection`'s transaction, each of `events` whose sequence is newer than the
    /// one recorded for its key (an earlier event of the batch counts), and records the newest;
    /// tells which were applied. Each applied event gets a consumer span in the trace it carries,
    /// and a log line with its trace id when it carries one.
    private func apply(_ events: [Event], in connection: DatabaseConnection) async throws -> [Bool] {
        let isNewer = try await recordSequences(of: events, in: connection)
        let newer = zip(events, isNewer).filter(\.1).map(\.0)
        let spans = newer.map { event in
            let span = startSpan("apply \(event.type.rawValue)", context: EventTraceContext.context(of: event), ofKind: .consumer)
            span.attributes["messaging.system"] = "kafka"
            span.attributes["messaging.destination.name"] = event.topic.rawValue
            span.attributes["messaging.consumer.group.name"] = name
            span.attributes["messaging.message.id"] = event.id.uuidString.lowercased()
            return span
        }
        defer { for span in spans { span.end() } }
        do {
            if let batching = handler as? any BatchEventHandler {
                try await batching.apply(newer, in: connection)
            } else {
                // Each in its span's context, so what it emits continues the trace.
                for (event, span) in zip(newer, spans) {
                    try await ServiceContext.withValue(span.context) { try await handler.apply(event, in: connection) }
                }
            }
        } catch {
            for span in spans { span.recordError(error) }
            throw error
        }
        for (event, span) in zip(newer, spans) where event.traceparent != nil {
            // In the span's context, so the line carries its trace id.
            ServiceContext.withValue(span.context) {
                logger.info("applied a traced event", metadata: ["event": "\(event.id)", "type": "\(event.type.rawValue)"])
            }
        }
        return isNewer
    }

    /// Which of `events` are newer than what was applied for their key, in order, after
    /// recording the newest of each key: two statements for the batch. The first locks each
    /// key's row (made if missing), so a second consumer of the same key (a rebalance's overlap)
    /// waits until this transaction ends and then sees what it applied.
    private func recordSequences(of events: [Event], in connection: DatabaseConnection) async throws -> [Bool] {
        let keys = Set(events.map { SequenceKey(topic: $0.topic.rawValue, key: $0.key) }).sorted()
        // A key's new row holds Int.min, below every sequence, until the second statement.
        let rows = try await connection.query(
            """
            INSERT INTO consumed_sequences (consumer, topic, key, sequence)
            SELECT \(name), k.topic, k.key, \(Int.min) FROM unnest(\(keys.map(\.topic))::text[], \(keys.map(\.key))::text[]) AS k(topic, key)
            ON CONFLICT (consumer, topic, key) DO UPDATE SET sequence = consumed_sequences.sequence
            RETURNING topic, key, sequence
            """)
        var newest: [SequenceKey: Int64] = [:]
        for row in rows { newest[SequenceKey(topic: try row.decode("topic"), key: try row.decode("key"))] = try row.decode("sequence") }
        var isNewer: [Bool] = []
        var changed: Set<SequenceKey> = []
        for event in events {
            let key = SequenceKey(topic: event.topic.rawValue, key: event.key)
            let newer = event.sequence > newest[key, default: .min]
            isNewer.append(newer)
            if newer {
                newest[key] = event.sequence
                changed.insert(key)
            }
        }
        guard !changed.isEmpty else { return isNewer }
        let recorded = Array(changed)
        // An upsert of rows that exist: each found through the key's index, whatever the table's
        // size. Sent with the handler's first statement.
        try await connection.executeLater(
            """
            INSERT INTO consumed_sequences (consumer, topic, key, sequence)
            SELECT \(name), n.topic, n.key, n.sequence
            FROM unnest(\(recorded.map(\.topic))::text[], \(recorded.map(\.key))::text[], \(recorded.map { Int(newest[$0]!) })::int8[])
                AS n(topic, key, sequence)
            ON CONFLICT (consumer, topic, key) DO UPDATE SET sequence = EXCLUDED.sequence
            """)
        return isNewer
    }

    /// Sends `message` to the dead letters, trying again while the broker refuses it: the
    /// partition moves on only once the message is kept there, and a send that fails for a
    /// while (the broker short of in-sync replicas) must not end the service.
    private func deadLetter(_ message: KafkaMessage, reason: String) async throws {
        logger.error(
            "dead-lettering a message",
            metadata: ["topic": "\(message.topic)", "partition": "\(message.partition)", "offset": "\(message.offset)", "reason": "\(reason)"])
        let source = "\(message.topic)/\(message.partition)/\(message.offset)"
        let letter = KafkaOutgoingMessage(
            topic: Topic.deadLetter.rawValue, key: message.key, value: message.value,
            headers: [KafkaHeader(name: "reason", value: reason), KafkaHeader(name: "consumer", value: name), KafkaHeader(name: "source", value: source)])
        _ = try await untilItSucceeds("cannot send a dead letter; retrying", metadata: ["source": "\(source)"]) {
            try await deadLetters.send(letter)
        } retrying: { _ in true }
        deadLettered.increment()
    }

    private let decoder = PostlyJSON.decoder()
}
