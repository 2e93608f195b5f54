import Foundation
import Logging
import PostlyEvents
import PostlyKafka
import PostlyModels
import PostlyPostgres
import ServiceLifecycleTestKit
import Synchronization
import Testing
import TestSupport

/// Events written with a change reach Kafka: all of them, once, in order per key,
/// whatever happens to the broker or the relay in between.
@Suite struct OutboxRelayTests {
    @Test func eventsWrittenWhileTheBrokerIsDownArriveOnceInOrderWhenItIsBack() async throws {
        try await TestDatabase.with { database in
            try await schema.apply(to: database)
            let broker = try await TestBroker.start()
            broker.stop()
            let kafka = try testConfiguration(brokers: broker.brokers, messageTimeout: .seconds(2))
            let producer = try KafkaProducer(configuration: kafka, logger: testLogger)
            let relay = OutboxRelay(
                database: database, publisher: producer, configuration: .init(batchSize: 100, maximumBackoff: .seconds(1)),
                logger: testLogger)
            // 50 keys, 10 events each, interleaved, in 100 transactions.
            let events = (1...10).flatMap { sequence in (0..<50).map { userEvent(key: "user-\($0)", sequence: Int64(sequence)) } }
            try await withRunning([producer, relay]) {
                try await write(events, perTransaction: 5, to: database)
                try await Task.sleep(for: .seconds(1))
                #expect(try await pendingCount(in: database) == 500, "nothing can be sent while the broker is down")

                try await broker.start()
                try await KafkaTopics.create(Topic.allCases.map(\.rawValue), configuration: kafka)
                let consumer = try KafkaConsumer(
                    configuration: kafka, groupID: uniqueName("outbox"), topics: [Topic.users.rawValue], logger: testLogger)
                let received = try await withRunning([consumer]) {
                    try await decodedEvents(receive(500, from: consumer, within: .seconds(60)))
                }
                #expect(Set(received.map(\.id)) == Set(events.map(\.id)), "every event exactly once")
                for (key, sequences) in sequencesByKey(received) {
                    #expect(sequences == Array(1...10), "order of \(key)")
                }
                #expect(try await eventually { try await pendingCount(in: database) == 0 })
            }
        }
    }

    /// A one-off command's drain ends when the command is stopped (SIGTERM) while another
    /// instance holds an event: it polled the outbox without a pause until the event was sent.
    @Test func aDrainEndsWhenItsCommandIsStopped() async throws {
        struct Accepts: EventPublisher {
            func publish(_ messages: [KafkaOutgoingMessage]) async -> [Result<Void, any Error>] { messages.map { _ in .success(()) } }
        }
        try await TestDatabase.with { database in
            try await schema.apply(to: database)
            try await write([userEvent(key: "user-1", sequence: 1)], perTransaction: 1, to: database)
            let relay = OutboxRelay(database: database, publisher: Accepts(), logger: testLogger)
            try await database.whileLocked(by: { _ = try await $0.query("SELECT id FROM outbox FOR UPDATE") }) {
                try await testGracefulShutdown { trigger in
                    let ended = Locked(false)
                    let draining = Task {
                        defer { ended.withLock { $0 = true } }
                        try await relay.drain()
                    }
                    try await Task.sleep(for: .milliseconds(500))
                    #expect(!ended.value, "the held event keeps it waiting")
                    trigger.triggerGracefulShutdown()
                    #expect(try await eventually(within: .seconds(5)) { ended.value })
                    draining.cancel()
                    await #expect(throws: CancellationError.self) { try await draining.value }
                }
            }
            #expect(try await pendingCount(in: database) == 1)
        }
    }

    @Test func aRelayKilledBetweenPublishingAndMarkingLosesNothing() async throws {
        struct Killed: Error {}
        /// Publishes for real, then dies before the relay can mark anything sent.
        struct DiesAfterPublishing: EventPublisher {
            let producer: KafkaProducer
            func publish(_ messages: [KafkaOutgoingMessage]) async -> [Result<Void, any Error>] {
                _ = await producer.publish(messages)
                return messages.map { _ in .failure(Killed()) }
            }
        }
        try await TestDatabase.with { database in
            try await schema.apply(to: database)
            let (broker, kafka) = try await startBroker()
            defer { broker.stop() }
            let producer = try KafkaProducer(configuration: kafka, logger: testLogger)
            let events = (1...20).map { userEvent(key: "user-\($0 % 3)", sequence: Int64($0)) }
            try await withRunning([producer]) {
                try await write(events, perTransaction: 4, to: database)
                let dying = OutboxRelay(database: database, publisher: DiesAfterPublishing(producer: producer), logger: testLogger)
                await #expect(throws: Killed.self) { try await dying.publishPending() }
                #expect(try await pendingCount(in: database) == 20, "nothing was marked sent")

                let next = OutboxRelay(database: database, publisher: producer, logger: testLogger)
                try await next.publishPending()
                #expect(try await pendingCount(in: database) == 0)

                let consumer = try KafkaConsumer(
                    configuration: kafka, groupID: uniqueName("killed"), topics: [Topic.users.rawValue], logger: testLogger)
                let received = try await withRunning([consumer]) {
                    try await decodedEvents(receive(40, from: consumer, within: .seconds(30)))
                }
                #expect(Set(received.map(\.id)) == Set(events.map(\.id)), "published twice, lost never")
            }
        }
    }

    /// Acknowledges every event but those it is told to fail, and remembers what it was handed.
    final class SelectivePublisher: EventPublisher {
        struct Refused: Error {}
        private let state = Mutex<(failing: Set<UUID>, handed: [Event])>(([], []))

        func fail(_ ids: Set<UUID>) { state.withLock { $0.failing = ids } }
        var handed: [Event] { state.withLock { $0.handed } }

        func publish(_ messages: [KafkaOutgoingMessage]) async -> [Result<Void, any Error>] {
            let events = messages.compactMap { try? PostlyJSON.decoder().decode(Event.self, from: Data($0.value)) }
            return state.withLock { state in
                state.handed += events
                return events.map { state.failing.contains($0.id) ? .failure(Refused()) : .success(()) }
            }
        }
    }

    @Test func aPartlyAcknowledgedBatchKeepsTheAcknowledgedEventsSent() async throws {
        try await TestDatabase.with { database in
            try await schema.apply(to: database)
            let publisher = SelectivePublisher()
            let relay = OutboxRelay(database: database, publisher: publisher, logger: testLogger)
            let (a1, b1, c1) = (userEvent(key: "a", sequence: 1), userEvent(key: "b", sequence: 1), userEvent(key: "c", sequence: 1))
            try await write([a1, b1, c1], perTransaction: 3, to: database)

            publisher.fail([c1.id])
            await #expect(throws: SelectivePublisher.Refused.self) { try await relay.publishPending() }
            #expect(try await pendingCount(in: database) == 1, "the 2 acknowledged events stay marked sent")

            // c's next event must not overtake c1, even when the broker takes it.
            let (c2, d1) = (userEvent(key: "c", sequence: 2), userEvent(key: "d", sequence: 1))
            try await write([c2, d1], perTransaction: 2, to: database)
            await #expect(throws: SelectivePublisher.Refused.self) { try await relay.publishPending() }
            #expect(try await pendingCount(in: database) == 2, "c1 and c2 wait; d1 is sent")

            publisher.fail([])
            try await relay.publishPending()
            #expect(try await pendingCount(in: database) == 0)

            let handed = publisher.handed.map(\.id)
            for event in [a1, b1, d1] {
                #expect(handed.filter { $0 == event.id }.count == 1, "an acknowledged event is never published again")
            }
            let lastOfC = publisher.handed.suffix(2).map(\.id)
            #expect(lastOfC == [c1.id, c2.id], "c's events go out in order once the broker takes c1")
        }
    }

    @Test func twoRelaysAtOnceKeepEachKeyInOrder() async throws {
        try await TestDatabase.with(poolSize: 6) { database in
            try await schema.apply(to: database)
            let (broker, kafka) = try await startBroker()
            defer { broker.stop() }
            let producer = try KafkaProducer(configuration: kafka, logger: testLogger)
            let relays = (0..<2).map { _ in
                OutboxRelay(database: database, publisher: producer, configuration: .init(batchSize: 7), logger: testLogger)
            }
            let events = (1...60).flatMap { sequence in (0..<5).map { userEvent(key: "user-\($0)", sequence: Int64(sequence)) } }
            let consumer = try KafkaConsumer(
                configuration: kafka, groupID: uniqueName("two-relays"), topics: [Topic.users.rawValue], logger: testLogger)
            try await withRunning([producer, consumer] + relays) {
                try await write(events, perTransaction: 3, to: database)
                let received = try await decodedEvents(receive(300, from: consumer, within: .seconds(60)))
                #expect(Set(received.map(\.id)).count == 300)
                for (key, sequences) in sequencesByKey(received) {
                    #expect(sequences == Array(1...60), "order of \(key)")
                }
            }
        }
    }

    /// A full batch whose every key another instance holds an earlier event of hands nothing to
    /// the broker, and says nothing more is to be done now: it said "full", and the relay took
    /// the same rows again at once, a statement a moment, for as long as the other instance held
    /// its batch. A full batch of which some went says more may be pending.
    @Test func aBatchAnotherInstanceHoldsBackWholeIsNotFull() async throws {
        try await TestDatabase.with(poolSize: 3) { database in
            try await schema.apply(to: database)
            let publisher = SelectivePublisher()
            let relay = OutboxRelay(database: database, publisher: publisher, configuration: .init(batchSize: 3), logger: testLogger)
            /// Runs `body` while another instance publishes the first pending event of `key`.
            func whileAnotherHolds(_ key: String, _ body: () async throws -> Void) async throws {
                try await database.transaction { connection in
                    _ = try await connection.query("SELECT id FROM outbox WHERE key = \(key) AND sent_at IS NULL ORDER BY id LIMIT 1 FOR UPDATE")
                    try await body()
                }
            }
            try await write((1...4).map { userEvent(key: "hot", sequence: Int64($0)) }, perTransaction: 4, to: database)
            try await whileAnotherHolds("hot") { () async throws in
                #expect(try await relay.publishPending() == false)
            }
            #expect(publisher.handed.isEmpty)
            #expect(try await relay.publishPending() == true)
            #expect(publisher.handed.map(\.sequence) == [1, 2, 3])

            try await write([userEvent(key: "warm", sequence: 1), userEvent(key: "warm", sequence: 2), userEvent(key: "cold", sequence: 1)], perTransaction: 3, to: database)
            try await whileAnotherHolds("warm") { () async throws in
                // hot 4, warm 2 (held back) and cold 1: two went, more may be pending.
                #expect(try await relay.publishPending() == true)
            }
            #expect(publisher.handed.map(\.key).suffix(2) == ["hot", "cold"])
        }
    }

    @Test func aCommitWakesTheRelayAtOnceNotAtTheNextPoll() async throws {
        try await TestDatabase.with { database in
            try await schema.apply(to: database)
            let (broker, kafka) = try await startBroker()
            defer { broker.stop() }
            let producer = try KafkaProducer(configuration: kafka, logger: testLogger)
            let relay = OutboxRelay(
                database: database, publisher: producer, configuration: .init(pollInterval: .seconds(120)), logger: testLogger)
            let consumer = try KafkaConsumer(
                configuration: kafka, groupID: uniqueName("notify"), topics: [Topic.users.rawValue], logger: testLogger)
            try await withRunning([producer, consumer, relay]) {
                // Warm up: the consumer joins its group and the relay goes idle.
                try await write([userEvent(key: "warm-up", sequence: 1)], perTransaction: 1, to: database)
                _ = try await receive(1, from: consumer, within: .seconds(30))
                try await Task.sleep(for: .milliseconds(500))
                var delays: [Duration] = []
                for sequence in 1...5 {
                    let written = ContinuousClock.now
                    try await write([userEvent(key: "user", sequence: Int64(sequence))], perTransaction: 1, to: database)
                    _ = try await receive(1, from: consumer, within: .seconds(5))
                    delays.append(written.duration(to: .now))
                }
                #expect(delays.allSatisfy { $0 < .seconds(3) }, "commit to consumer: \(delays.sorted())")
            }
        }
    }

    /// A post of the longest content allowed takes more than Kafka's 1 MB record with its HTML
    /// and text: its event goes without them (consumers render), instead of being refused on
    /// every try, first in the outbox, holding back every event behind it.
    @Test func thePostOfTheLongestContentIsPublishedAndTheEventsBehindIt() async throws {
        try await TestDatabase.with { database in
            try await schema.apply(to: database)
            let (broker, kafka) = try await startBroker()
            defer { broker.stop() }
            let producer = try KafkaProducer(configuration: kafka, logger: testLogger)
            let relay = OutboxRelay(database: database, publisher: producer, logger: testLogger)
            let consumer = try KafkaConsumer(
                configuration: kafka, groupID: uniqueName("long"), topics: [Topic.posts.rawValue, Topic.users.rawValue], logger: testLogger)
            let content = String(repeating: "😀\u{1}", count: 50_000)
            let post = Post(
                id: "long", title: "Long", content: content, contentHtml: "<p>\(content)</p>\n", excerpt: "😀", slug: "long", status: .published,
                coverImage: nil, author: Author(userId: "ada", name: "Ada"), views: 0, likes: 0, comments: [], commentsCount: 0, readTime: 400,
                createdAt: Date(), updatedAt: Date(), publishedAt: Date(), version: 1)
            let created = Event(producer: "tests", key: post.id, sequence: 1, actorId: "ada", data: .postCreated(PostSnapshot(post: post, contentText: content)))
            try await withRunning([producer, consumer]) {
                try await write([created, userEvent(key: "ada", sequence: 1)], perTransaction: 2, to: database)
                try await relay.publishPending()
                #expect(try await pendingCount(in: database) == 0)
                let received = try await decodedEvents(receive(2, from: consumer, within: .seconds(30)))
                guard case .postCreated(let snapshot)? = received.first(where: { $0.key == "long" })?.data else {
                    Issue.record("no post.created among \(received.map(\.type))")
                    return
                }
                #expect(snapshot.post.content == content)
                #expect(snapshot.post.contentHtml == nil && snapshot.contentText == nil)
            }
        }
    }
}
