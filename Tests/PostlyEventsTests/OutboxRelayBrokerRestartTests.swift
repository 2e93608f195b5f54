import Foundation
import PostlyEvents
import PostlyKafka
import PostlyModels
import PostlyPostgres
import Testing
import TestSupport

/// The broker comes back empty (tansu keeps nothing): the relay's producer creates no topic by
/// sending; the relay creates Postly's topics with their one partition count and events flow.
@Suite struct OutboxRelayBrokerRestartTests {
    @Test func eventsFlowAfterTheBrokerComesBackEmptyInTopicsOfThreePartitions() async throws {
        try await TestDatabase.with { database in
            try await schema.apply(to: database)
            let (broker, kafka) = try await startBroker()
            defer { broker.stop() }
            let producer = try KafkaProducer(configuration: kafka, logger: testLogger)
            let relay = OutboxRelay(database: database, publisher: producer, configuration: .init(maximumBackoff: .seconds(1)), logger: testLogger)
            try await withRunning([producer, relay]) {
                try await write([userEvent(key: "user", sequence: 1)], perTransaction: 1, to: database)
                #expect(try await eventually { try await pendingCount(in: database) == 0 })

                broker.stop()
                try await broker.start()
                let back = ContinuousClock.now
                let events = (2...11).map { userEvent(key: "user", sequence: Int64($0)) }
                try await write(events, perTransaction: 1, to: database)
                #expect(try await eventually(within: .seconds(30)) { try await pendingCount(in: database) == 0 })
                let published = back.duration(to: .now)

                let consumer = try KafkaConsumer(
                    configuration: kafka, groupID: uniqueName("restart"), topics: [Topic.users.rawValue], logger: testLogger)
                let received = try await withRunning([consumer]) {
                    try await decodedEvents(receive(10, from: consumer, within: .seconds(30)))
                }
                #expect(received.map(\.id) == events.map(\.id), "every event once, in order")
                #expect(published < .seconds(5), "published \(published) after the broker's return")
                for topic in Topic.allCases {
                    #expect(try await partitionsReached(in: topic.rawValue, by: producer) == [0, 1, 2], "\(topic)")
                }
            }
        }
    }
}
