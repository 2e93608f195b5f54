import Foundation
import PostlyEvents
import PostlyKafka
import PostlyModels
import PostlyPostgres
import ServiceLifecycle
import Synchronization
import Testing
import TestSupport

/// A consumer applies each event once, only when it is newer than what it applied for its
/// key, and moves on past a message it cannot read.
@Suite struct EventConsumerRunnerTests {
    func appliedSequences(_ database: Database, key: String) async throws -> [Int64] {
        try await database.query("SELECT sequence FROM applied WHERE key = \(key) ORDER BY applied_at").map {
            try $0.decode("sequence", as: Int64.self)
        }
    }

    /// A consuming service: its database, a broker of its own, and a runner recording what
    /// it applies from `topics`, running while `body` runs.
    func withRunner(
        topics: [Topic] = [.users], handler: any EventHandler = RecordingHandler(), deadLettersTo deadLetterBroker: KafkaConfiguration? = nil,
        _ body: @escaping (Database, KafkaProducer, KafkaConfiguration) async throws -> Void
    ) async throws {
        try await TestDatabase.with { database in
            try await schema.apply(to: database)
            let (broker, kafka) = try await startBroker()
            defer { broker.stop() }
            let producer = try KafkaProducer(configuration: kafka, logger: testLogger)
            let deadLetters = try deadLetterBroker.map { try KafkaProducer(configuration: $0, logger: testLogger) } ?? producer
            let runner = EventConsumerRunner(
                name: "tests", topics: topics, database: database, kafka: kafka, deadLetters: deadLetters,
                handler: handler, logger: testLogger)
            let services: [any Service] = deadLetters === producer ? [producer, runner] : [producer, deadLetters, runner]
            try await withRunning(services) { try await body(database, producer, kafka) }
        }
    }

    func send(_ sequences: [Int64], key: String = "ada", with producer: KafkaProducer) async throws {
        for sequence in sequences {
            let event = userEvent(key: key, sequence: sequence)
            _ = try await producer.send(KafkaOutgoingMessage(topic: Topic.users.rawValue, key: key, value: encoded(event)))
        }
    }

    /// A database that cannot do it now (here a statement cancelled by its timeout, SQLSTATE
    /// 57014; a full disk or a server shutting down alike) is no fault of the event: it is
    /// applied once the database can, never dead-lettered.
    @Test func anEventTheDatabaseCannotApplyForAWhileIsAppliedLaterNotDeadLettered() async throws {
        let handler = TimingOutTwice()
        try await withRunner(handler: handler) { database, producer, _ in
            try await send([21, 22], with: producer)
            #expect(try await eventually { try await appliedSequences(database, key: "ada") == [21, 22] })
            #expect(handler.timeouts == 2)
        }
    }

    /// An event that meets another release's schema (here a table its handler writes, which the
    /// next release's migration makes: 42P01) waits for it. During a rolling update, a pod
    /// meeting the other release's schema dead-lettered such events for good.
    @Test func anEventMetByAnotherReleasesSchemaIsAppliedOnceTheSchemaIsThere() async throws {
        let handler = WritingToATableMadeLater()
        try await withRunner(handler: handler) { database, producer, _ in
            try await send([31, 32], with: producer)
            #expect(try await eventually { handler.attempts >= 3 })
            try await database.execute("CREATE TABLE made_later (sequence bigint)")
            #expect(try await eventually { try await appliedSequences(database, key: "ada") == [31, 32] })
            #expect(try await database.query("SELECT sequence FROM made_later ORDER BY sequence").map { try $0.decode("sequence", as: Int64.self) } == [31, 32])
        }
    }

    /// A dead letter the broker will not take for a while (here its broker is down) holds the
    /// partition until it is kept; the runner, and with it the service, goes on.
    @Test func aDeadLetterTheBrokerRefusesForAWhileIsSentLaterAndTheRunnerGoesOn() async throws {
        let (deadLetterBroker, deadLetterKafka) = try await startBroker()
        defer { deadLetterBroker.stop() }
        deadLetterBroker.stop()
        try await withRunner(deadLettersTo: deadLetterKafka) { database, producer, _ in
            try await send([12, 13, 14], with: producer)
            #expect(try await eventually { try await appliedSequences(database, key: "ada") == [12] })
            // Past the dead letter's message timeout (2 s): refused at least once.
            try await Task.sleep(for: .seconds(3))
            #expect(try await appliedSequences(database, key: "ada") == [12])

            try await deadLetterBroker.start()
            try await KafkaTopics.create(Topic.allCases.map(\.rawValue), configuration: deadLetterKafka)
            #expect(try await eventually(within: .seconds(30)) { try await appliedSequences(database, key: "ada") == [12, 14] })
            let deadLetters = try KafkaConsumer(
                configuration: deadLetterKafka, groupID: uniqueName("dead"), topics: [Topic.deadLetter.rawValue], logger: testLogger)
            let dead = try await withRunning([deadLetters]) { try await receive(1, from: deadLetters, within: .seconds(20))[0] }
            #expect(try PostlyJSON.decoder().decode(Event.self, from: Data(dead.value)).sequence == 13)
        }
    }

    @Test func duplicatesAndOlderSequencesChangeNothing() async throws {
        try await withRunner { database, producer, _ in
            let second = userEvent(key: "ada", sequence: 2)
            let sent = [userEvent(key: "ada", sequence: 1), second, second, userEvent(key: "ada", sequence: 1), userEvent(key: "ada", sequence: 3)]
            for event in sent {
                _ = try await producer.send(KafkaOutgoingMessage(topic: Topic.users.rawValue, key: event.key, value: encoded(event)))
            }
            #expect(try await eventually { try await appliedSequences(database, key: "ada").last == 3 })
            try await Task.sleep(for: .milliseconds(300))
            #expect(try await appliedSequences(database, key: "ada") == [1, 2, 3])
        }
    }

    @Test func anUndecodableMessageIsDeadLetteredAndTheNextOneIsApplied() async throws {
        try await withRunner { database, producer, kafka in
            let deadLetters = try KafkaConsumer(
                configuration: kafka, groupID: uniqueName("dead"), topics: [Topic.deadLetter.rawValue], logger: testLogger)
            let garbage = bytes("{\"type\": \"post.exploded\", \"garbage\": true")
            _ = try await producer.send(KafkaOutgoingMessage(topic: Topic.users.rawValue, key: "ada", value: garbage))
            let event = userEvent(key: "ada", sequence: 1)
            _ = try await producer.send(KafkaOutgoingMessage(topic: Topic.users.rawValue, key: "ada", value: encoded(event)))

            #expect(try await eventually { try await appliedSequences(database, key: "ada") == [1] })
            let dead = try await withRunning([deadLetters]) { try await receive(1, from: deadLetters, within: .seconds(20))[0] }
            #expect(dead.value == garbage)
            #expect(dead.key == "ada")
            let reason = String(decoding: dead.header("reason") ?? [], as: UTF8.self)
            #expect(reason.hasPrefix("undecodable event"))
            #expect(String(decoding: dead.header("source") ?? [], as: UTF8.self).hasPrefix("postly.users/"))
        }
    }

    @Test func anEventTheHandlerFailsOnForGoodIsDeadLetteredAndTheNextOneIsApplied() async throws {
        try await withRunner { database, producer, kafka in
            let deadLetters = try KafkaConsumer(
                configuration: kafka, groupID: uniqueName("dead"), topics: [Topic.deadLetter.rawValue], logger: testLogger)
            for sequence: Int64 in [12, 13, 14] {
                let event = userEvent(key: "ada", sequence: sequence)
                _ = try await producer.send(KafkaOutgoingMessage(topic: Topic.users.rawValue, key: "ada", value: encoded(event)))
            }
            #expect(try await eventually { try await appliedSequences(database, key: "ada") == [12, 14] })
            let dead = try await withRunning([deadLetters]) { try await receive(1, from: deadLetters, within: .seconds(20))[0] }
            let event = try PostlyJSON.decoder().decode(Event.self, from: Data(dead.value))
            #expect(event.sequence == 13)
            #expect(String(decoding: dead.header("reason") ?? [], as: UTF8.self).contains("Unlucky"))
        }
    }

    @Test func everySampleEventIsAppliedOnce() async throws {
        // In the order they happened: each key's sequence grows with every event.
        let samples = try EventType.allCases.map { (try EventFixtures.event($0), try EventFixtures.data($0)) }
            .sorted { $0.0.occurredAt < $1.0.occurredAt }
        try await withRunner(topics: [.users, .posts, .comments]) { database, producer, _ in
            for (event, sample) in samples {
                // Twice: the second delivery changes nothing.
                for _ in 0..<2 {
                    _ = try await producer.send(KafkaOutgoingMessage(topic: event.topic.rawValue, key: event.key, value: Array(sample)))
                }
            }
            let expected = Set(samples.map(\.0.id))
            #expect(try await eventually {
                let ids = try await database.query("SELECT event_id FROM applied").map { try $0.decode("event_id", as: UUID.self) }
                return Set(ids) == expected && ids.count == expected.count
            })
        }
    }

    /// A consumer that stops polling longer than the group allows (here a slow handler with a
    /// full buffer; in production a process paused or starved past its session) is put out of
    /// its group, and committing the batch it was applying then fails. That batch is already
    /// durable: the runner goes on, rejoins, and the redelivered events change nothing.
    @Test func aConsumerPutOutOfItsGroupGoesOnAndAppliesEveryEventOnce() async throws {
        struct SlowOnFirst: EventHandler {
            func apply(_ event: Event, in connection: DatabaseConnection) async throws {
                if event.sequence == 1 { try await Task.sleep(for: .seconds(4)) }
                try await connection.execute(
                    "INSERT INTO applied (event_id, key, sequence) VALUES (\(event.id), \(event.key), \(event.sequence))")
            }
        }
        try await TestDatabase.with { database in
            try await schema.apply(to: database)
            let (broker, kafka) = try await startBroker()
            defer { broker.stop() }
            let producer = try KafkaProducer(configuration: kafka, logger: testLogger)
            try await withRunning([producer]) {
                // More than a batch and a full buffer: the poll thread stops while the first batch is slow.
                for sequence: Int64 in 1...300 {
                    let event = userEvent(key: "ada", sequence: sequence)
                    _ = try await producer.send(KafkaOutgoingMessage(topic: Topic.users.rawValue, key: "ada", value: encoded(event)))
                }
                var impatient = kafka
                impatient.extra["max.poll.interval.ms"] = String(kafka.sessionTimeout.components.seconds * 1000)
                let runner = EventConsumerRunner(
                    name: "impatient", topics: [.users], database: database, kafka: impatient, deadLetters: producer,
                    handler: SlowOnFirst(), logger: testLogger)
                try await withRunning([runner]) { () async throws in
                    #expect(try await eventually(within: .seconds(40)) { try await appliedSequences(database, key: "ada").last == 300 })
                }
            }
            #expect(try await appliedSequences(database, key: "ada") == Array(1...300))
        }
    }
}
