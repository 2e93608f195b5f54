import Logging
import Metrics
import PostlyKafka
import PostlyModels
import PostlyPostgres
import ServiceLifecycle

/// Publishes pending outbox rows to Kafka and marks them sent after the broker's delivery
/// report. Wakes when a transaction of its process commits events (`CommitSignals`; the poll
/// takes what another instance left behind), backs off while the broker is down, and is safe
/// with several instances: each
/// takes rows `FOR UPDATE SKIP LOCKED`, and leaves a key alone while another instance
/// holds an earlier event of it, so events stay in order per key.
///
/// Delivery is at least once: an instance that dies between publishing and marking leaves
/// its rows pending, and they are published again. Consumers skip what they have applied.
public final class OutboxRelay: Service {
    public struct Configuration: Sendable {
        public var batchSize: Int
        /// How often to look even without a notification.
        public var pollInterval: Duration
        public var maximumBackoff: Duration
        /// Sent rows are deleted after this long.
        public var retention: Duration

        public init(batchSize: Int = 500, pollInterval: Duration = .seconds(1), maximumBackoff: Duration = .seconds(5), retention: Duration = .seconds(86_400)) {
            self.batchSize = batchSize
            self.pollInterval = pollInterval
            self.maximumBackoff = maximumBackoff
            self.retention = retention
        }
    }

    private let database: Database
    private let publisher: any EventPublisher
    private let configuration: Configuration
    private let logger: Logger
    private let published = Counter(label: "postly_outbox_published_total")

    public init(database: Database, publisher: any EventPublisher, configuration: Configuration = .init(), logger: Logger) {
        self.database = database
        self.publisher = publisher
        self.configuration = configuration
        self.logger = logger
    }

    public func run() async throws {
        // One buffered wake-up at most: notifications that arrive while a batch is being
        // published collapse into one more look.
        let (wakeUps, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let commits = database.onCommit(signalling: Outbox.channel) { _ in wake.yield() }
        defer { commits.cancel() }
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask {
                while !Task.isCancelled {
                    wake.yield()
                    try? await Task.sleep(for: self.configuration.pollInterval)
                }
            }
            var backoff = Backoff(maximum: configuration.maximumBackoff)
            var lastPurge = ContinuousClock.now
            for await _ in wakeUps.cancelOnGracefulShutdown() {
                do {
                    // A full batch means there may be more. Graceful shutdown cancels the sends
                    // waiting for a broker that is down; their rows stay pending for the restart.
                    try await cancelWhenGracefulShutdown {
                        while try await self.publishPending() {}
                    }
                    backoff.reset()
                    if lastPurge.duration(to: .now) > .seconds(600), await purgeSent() {
                        lastPurge = .now
                    }
                } catch {
                    if Task.isShuttingDownGracefully { break }
                    logger.warning("outbox relay cannot publish; retrying", metadata: ["error": "\(error)", "backoff": "\(backoff.current)"])
                    await backoff.pause()
                    wake.yield()
                }
            }
            group.cancelAll()
        }
    }

    /// Publishes one batch; returns whether more may be pending: the batch was full, and some
    /// of it went to the broker (a batch whose every row another instance holds back would be
    /// taken again at once, a statement a moment). The rows the broker acknowledged are marked
    /// sent and committed even when others of the batch failed; the first failure is thrown
    /// after that commit.
    @discardableResult
    public func publishPending() async throws -> Bool {
        let batch = try await database.transaction { connection in
            let rows = try await connection.query(
                """
                SELECT id, topic, key, payload FROM outbox WHERE sent_at IS NULL
                ORDER BY id LIMIT \(configuration.batchSize) FOR UPDATE SKIP LOCKED
                """)
            var pending = try rows.map { row in
                OutboxRow(
                    id: try row.decode("id", as: Int.self), topic: try row.decode("topic", as: String.self),
                    key: try row.decode("key", as: String.self), payload: try row.decode("payload", as: [UInt8].self))
            }
            guard let lastID = pending.last?.id else { return PublishedBatch(taken: 0, handed: 0) }
            // Another instance holds an earlier event of these keys: leave them for later.
            let ids = pending.map(\.id)
            let blocked = try await connection.query(
                """
                SELECT DISTINCT key FROM outbox
                WHERE sent_at IS NULL AND key = ANY(\(Array(Set(pending.map(\.key)))))
                  AND id < \(lastID) AND NOT (id = ANY(\(ids)))
                """
            ).map { try $0.decode("key", as: String.self) }
            if !blocked.isEmpty {
                pending.removeAll { blocked.contains($0.key) }
            }
            let results = await publisher.publish(pending.map { KafkaOutgoingMessage(topic: $0.topic, key: $0.key, value: $0.payload) })
            // After a failed event, its key's later events wait too, to keep the order.
            var failedKeys: Set<String> = []
            var sent: [Int] = []
            var firstError: (any Error)?
            for (row, result) in zip(pending, results) {
                switch result {
                case .success where !failedKeys.contains(row.key): sent.append(row.id)
                case .success: break
                case .failure(let error):
                    failedKeys.insert(row.key)
                    firstError = firstError ?? error
                }
            }
            if !sent.isEmpty {
                try await connection.execute("UPDATE outbox SET sent_at = now() WHERE id = ANY(\(sent))")
            }
            return PublishedBatch(taken: rows.count, handed: pending.count, sent: sent.count, failure: firstError)
        }
        published.increment(by: batch.sent)
        if let failure = batch.failure { throw failure }
        return batch.taken == configuration.batchSize && batch.handed > 0
    }

    /// Publishes until no event is pending, as a one-off command does before it stops. A
    /// publishing error is thrown, and so is `CancellationError` when the command is stopped
    /// (SIGTERM): the events stay in the outbox for the service's relay.
    public func drain() async throws {
        while true {
            while try await publishPending() {}
            let pending = try await database.query("SELECT count(*) AS pending FROM outbox WHERE sent_at IS NULL")
                .first?.decode("pending", as: Int.self) ?? 0
            if pending == 0 { return }
            // Another instance holds some of them for a moment. Stopped, the wait ends at once
            // (the loop went on without a pause).
            await sleepUnlessShuttingDown(for: .milliseconds(200))
            if Task.isShuttingDownGracefully {
                logger.warning("stopped with events left in the outbox, for the service's relay", metadata: ["pending": "\(pending)"])
                throw CancellationError()
            }
            try Task.checkCancellation()
        }
    }

    /// What one batch did; the failure travels out of the transaction so the marks commit first.
    private struct PublishedBatch: Sendable {
        var taken: Int
        var handed: Int
        var sent = 0
        var failure: (any Error)?
    }

    /// Deletes the rows sent before the retention, a chunk per statement and a few chunks per
    /// look, so publishing goes on between them: one statement for the day after a long outage
    /// or an import could pass the statement timeout, and failed again at every look. Returns
    /// whether the purge is done for now: not when rows remain (the next look goes on), done
    /// when it failed (the rows are left to the next purge).
    private func purgeSent() async -> Bool {
        let (seconds, chunk) = (Int(configuration.retention.components.seconds), 10_000)
        do {
            for _ in 0..<10 {
                let deleted = try await database.execute(
                    """
                    DELETE FROM outbox WHERE id IN (
                        SELECT id FROM outbox WHERE sent_at < now() - make_interval(secs => \(seconds)) ORDER BY id LIMIT \(chunk))
                    """)
                if deleted < chunk { return true }
            }
            return false
        } catch {
            logger.warning("cannot purge the sent outbox rows; trying again later", metadata: ["error": "\(error)"])
            return true
        }
    }

    struct OutboxRow {
        var id: Int
        var topic: String
        var key: String
        var payload: [UInt8]
    }
}

