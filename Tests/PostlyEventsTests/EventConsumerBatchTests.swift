import Foundation
import PostlyEvents
import PostlyKafka
import PostlyModels
import PostlyPostgres
import Testing
import TestSupport

/// Events that wait are applied many to a transaction, each still checked against its
/// sequence, and one failing event does not take its batch-mates down with it.
@Suite struct EventConsumerBatchTests {
    static let schema = Migrations([
        Outbox.migration,
        Migration(
            version: 2, name: "applied in",
            sql: "CREATE TABLE applied_in (key text NOT NULL, sequence bigint NOT NULL, transaction_id bigint NOT NULL)"),
    ])

    /// Records each event with the transaction that applied it; fails for good on sequence 13.
    struct TransactionRecordingHandler: EventHandler {
        struct Unlucky: Error {}

        func apply(_ event: Event, in connection: DatabaseConnection) async throws {
            if event.sequence == 13 { throw Unlucky() }
            try await connection.execute(
                "INSERT INTO applied_in (key, sequence, transaction_id) VALUES (\(event.key), \(event.sequence), txid_current())")
        }
    }

    @Test func waitingEventsAreAppliedManyToATransactionEachOnce() async throws {
        try await TestDatabase.with { database in
            try await Self.schema.apply(to: database)
            let (broker, kafka) = try await startBroker()
            defer { broker.stop() }
            let producer = try KafkaProducer(configuration: kafka, logger: testLogger)
            try await withRunning([producer]) {
                // All sent before the consumer starts, each twice: they wait.
                for sequence: Int64 in 1...200 where sequence != 13 {
                    let event = userEvent(key: "ada", sequence: sequence)
                    for _ in 0..<2 {
                        _ = try await producer.send(KafkaOutgoingMessage(topic: Topic.users.rawValue, key: "ada", value: encoded(event)))
                    }
                }
                let runner = EventConsumerRunner(
                    name: "batch-tests", topics: [.users], database: database, kafka: kafka, deadLetters: producer,
                    handler: TransactionRecordingHandler(), logger: testLogger)
                try await withRunning([runner]) { () async throws in
                    #expect(try await eventually {
                        try await database.query("SELECT max(sequence) AS last FROM applied_in")[0].decode("last", as: Int64?.self) == 200
                    })
                }
            }
            let rows = try await database.query("SELECT count(*) AS events, count(DISTINCT transaction_id) AS transactions FROM applied_in")
            #expect(try rows[0].decode("events", as: Int.self) == 199)
            #expect(try rows[0].decode("transactions", as: Int.self) < 100)
        }
    }

    @Test func aFailingEventIsDeadLetteredAloneAndItsBatchMatesAreApplied() async throws {
        try await TestDatabase.with { database in
            try await Self.schema.apply(to: database)
            let (broker, kafka) = try await startBroker()
            defer { broker.stop() }
            let producer = try KafkaProducer(configuration: kafka, logger: testLogger)
            try await withRunning([producer]) {
                for sequence: Int64 in 10...16 {
                    let event = userEvent(key: "ada", sequence: sequence)
                    _ = try await producer.send(KafkaOutgoingMessage(topic: Topic.users.rawValue, key: "ada", value: encoded(event)))
                }
                let runner = EventConsumerRunner(
                    name: "batch-tests", topics: [.users], database: database, kafka: kafka, deadLetters: producer,
                    handler: TransactionRecordingHandler(), logger: testLogger)
                let deadLetters = try KafkaConsumer(
                    configuration: kafka, groupID: uniqueName("dead"), topics: [Topic.deadLetter.rawValue], logger: testLogger)
                try await withRunning([runner]) { () async throws in
                    #expect(try await eventually {
                        try await database.query("SELECT count(*) AS n FROM applied_in")[0].decode("n", as: Int.self) == 6
                    })
                }
                let dead = try await withRunning([deadLetters]) { try await receive(1, from: deadLetters, within: .seconds(20)) }
                #expect(try decodedEvents(dead).map(\.sequence) == [13])
            }
            let sequences = try await database.query("SELECT sequence FROM applied_in ORDER BY sequence").map { try $0.decode("sequence", as: Int64.self) }
            #expect(sequences == [10, 11, 12, 14, 15, 16])
        }
    }
}
