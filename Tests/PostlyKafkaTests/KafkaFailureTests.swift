import CRdKafka
import Foundation
import Logging
@testable import PostlyKafka
import ServiceLifecycle
import Testing
import TestSupport

@Suite("Kafka shutdown and broker failures")
struct KafkaFailureTests {
    @Test func sendToUnreachableBrokerThrowsAfterTheMessageTimeout() async throws {
        let nobody = "127.0.0.1:\(try TestBroker.freePort())"
        let configuration = try testConfiguration(brokers: nobody, messageTimeout: .seconds(1))
        let producer = try KafkaProducer(configuration: configuration, logger: testLogger)

        let started = ContinuousClock.now
        let failure = try await withRunning([producer]) { () async -> KafkaError? in
            do {
                _ = try await producer.send(KafkaOutgoingMessage(topic: "nowhere", value: bytes("lost")))
                return nil
            } catch {
                return error as? KafkaError
            }
        }
        let elapsed = ContinuousClock.now - started

        #expect(failure == .timedOut)
        #expect(elapsed < .seconds(5), "took \(elapsed)")
    }

    @Test func cancellingASendThatWaitsForABrokerEndsItAtOnce() async throws {
        let nobody = "127.0.0.1:\(try TestBroker.freePort())"
        let configuration = try testConfiguration(brokers: nobody, messageTimeout: .seconds(30))
        let producer = try KafkaProducer(configuration: configuration, logger: testLogger)

        let (failure, elapsed) = try await withRunning([producer]) { () async -> ((any Error)?, Duration) in
            let sending = Task {
                try await producer.send(KafkaOutgoingMessage(topic: "nowhere", value: bytes("waiting")))
            }
            try? await Task.sleep(for: .milliseconds(500))
            let cancelled = ContinuousClock.now
            sending.cancel()
            do {
                _ = try await sending.value
                return (nil, cancelled.duration(to: .now))
            } catch {
                return (error, cancelled.duration(to: .now))
            }
        }
        #expect(failure is CancellationError)
        #expect(elapsed < .seconds(1), "took \(elapsed)")
    }

    @Test func gracefulShutdownEndsRunAndFinishesMessages() async throws {
        let configuration = try testConfiguration()
        let topic = uniqueName("shutdown")
        try await KafkaTopics.create([topic], partitions: 1, configuration: configuration)
        let producer = try KafkaProducer(configuration: configuration, logger: testLogger)
        let consumer = try KafkaConsumer(configuration: configuration, groupID: uniqueName("group"), topics: [topic], logger: testLogger)
        let services = ServiceGroup(configuration: .init(services: [producer, consumer], logger: testLogger))

        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await services.run() }
            _ = try await producer.send(KafkaOutgoingMessage(topic: topic, value: bytes("before shutdown")))
            _ = try await receive(1, from: consumer)
            let shutdownStarted = ContinuousClock.now
            await services.triggerGracefulShutdown()
            try await group.waitForAll()
            #expect(ContinuousClock.now - shutdownStarted < .seconds(5))
        }

        var remaining = consumer.messages.makeAsyncIterator()
        #expect(await remaining.next() == nil)
        await #expect(throws: KafkaError.closed) {
            try await producer.send(KafkaOutgoingMessage(topic: topic, value: bytes("after shutdown")))
        }
    }

    @Test func cancellingRunClosesTheConsumerAndFinishesMessages() async throws {
        let configuration = try testConfiguration()
        let topic = uniqueName("cancel")
        try await KafkaTopics.create([topic], partitions: 1, configuration: configuration)
        let consumer = try KafkaConsumer(configuration: configuration, groupID: uniqueName("group"), topics: [topic], logger: testLogger)

        let reader = Task {
            var count = 0
            for await _ in consumer.messages { count += 1 }
            return count
        }
        try await withRunning([consumer]) {
            try await Task.sleep(for: .milliseconds(300))
        }

        #expect(await reader.value == 0)
        let someMessage = KafkaMessage(topic: topic, partition: 0, offset: 0, key: nil, value: [])
        await #expect(throws: KafkaError.closed) { try await consumer.commit([someMessage]) }
    }

    @Test func producerContinuesWhenTheBrokerComesBackEmpty() async throws {
        let broker = try await TestBroker.start()
        defer { broker.stop() }
        let configuration = try testConfiguration(brokers: broker.brokers, messageTimeout: .seconds(5))
        let topic = uniqueName("restart")
        try await KafkaTopics.create([topic], partitions: 1, configuration: configuration)
        let producer = try KafkaProducer(configuration: configuration, logger: testLogger)

        try await withRunning([producer]) {
            _ = try await producer.send(KafkaOutgoingMessage(topic: topic, key: "k", value: bytes("before restart")))
            broker.stop()
            try await broker.start()
            // The topic is gone with the broker's memory; the development setup creates it again.
            try await KafkaTopics.create([topic], partitions: 1, configuration: configuration)
            let report = try await sendRetrying(KafkaOutgoingMessage(topic: topic, key: "k", value: bytes("after restart")), with: producer, for: .seconds(30))
            #expect(report.offset == 0, "the new broker's log starts empty")
        }
    }

    /// A fatal error (an idempotent producer's sequence out of order, its id fenced) ends a
    /// librdkafka client for good: the producer goes on with a new one, where every send
    /// failed until the process was restarted.
    @Test func producerContinuesAfterAFatalError() async throws {
        let configuration = try testConfiguration(messageTimeout: .seconds(5))
        let topic = uniqueName("fatal")
        try await KafkaTopics.create([topic], partitions: 1, configuration: configuration)
        let producer = try KafkaProducer(configuration: configuration, logger: testLogger)
        try await withRunning([producer]) {
            _ = try await producer.send(KafkaOutgoingMessage(topic: topic, key: "k", value: bytes("before")))
            #expect(rd_kafka_test_fatal_error(producer.currentClient, RD_KAFKA_RESP_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER, "a test") == RD_KAFKA_RESP_ERR_NO_ERROR)
            let report = try await sendRetrying(KafkaOutgoingMessage(topic: topic, key: "k", value: bytes("after")), with: producer, for: .seconds(15))
            #expect(report.offset == 1)
        }
    }

    /// The broker comes back without the topic, its records or the group's offsets; the
    /// consumer starts over with a fresh client and reads the re-created topic from the start.
    @Test
    func consumerContinuesWhenTheBrokerComesBackEmpty() async throws {
        let broker = try await TestBroker.start()
        defer { broker.stop() }
        let configuration = try testConfiguration(brokers: broker.brokers, messageTimeout: .seconds(5))
        let topic = uniqueName("restart")
        try await KafkaTopics.create([topic], partitions: 1, configuration: configuration)
        let producer = try KafkaProducer(configuration: configuration, logger: testLogger)
        let consumer = try KafkaConsumer(configuration: configuration, groupID: uniqueName("group"), topics: [topic], logger: testLogger)

        try await withRunning([producer, consumer]) {
            _ = try await producer.send(KafkaOutgoingMessage(topic: topic, key: "k", value: bytes("before restart")))
            try await consumer.commit(try await receive(1, from: consumer))
            broker.stop()
            try await broker.start()
            try await KafkaTopics.create([topic], partitions: 1, configuration: configuration)
            _ = try await sendRetrying(KafkaOutgoingMessage(topic: topic, key: "k", value: bytes("after restart")), with: producer, for: .seconds(30))
            let after = try await receive(1, from: consumer, within: .seconds(30))[0]
            #expect(after.value == bytes("after restart"))
            try await consumer.commit([after])
        }
    }

    /// A batch read from the log the broker lost is committed after the consumer started over
    /// (the runner commits a batch after applying it). Its offsets would have put the group's
    /// next consumer past the first records of the new log.
    @Test func offsetsOfRecordsFromALostLogAreNotCommitted() async throws {
        let broker = try await TestBroker.start()
        defer { broker.stop() }
        let configuration = try testConfiguration(brokers: broker.brokers, messageTimeout: .seconds(5))
        let topic = uniqueName("lost-log")
        let group = uniqueName("group")
        try await KafkaTopics.create([topic], partitions: 1, configuration: configuration)
        let producer = try KafkaProducer(configuration: configuration, logger: testLogger)
        let consumer = try KafkaConsumer(configuration: configuration, groupID: group, topics: [topic], logger: testLogger)

        try await withRunning([producer, consumer]) {
            for number in 0..<3 {
                _ = try await producer.send(KafkaOutgoingMessage(topic: topic, key: "k", value: bytes("old \(number)")))
            }
            let old = try await receive(3, from: consumer)
            broker.stop()
            try await broker.start()
            try await KafkaTopics.create([topic], partitions: 1, configuration: configuration)
            for number in 0..<5 {
                let message = KafkaOutgoingMessage(topic: topic, key: "k", value: bytes("new \(number)"))
                _ = try await sendRetrying(message, with: producer, for: .seconds(30))
            }
            #expect(try await receive(1, from: consumer, within: .seconds(30))[0].value == bytes("new 0"))
            try await consumer.commit(old)
        }
        let next = try KafkaConsumer(configuration: configuration, groupID: group, topics: [topic], logger: testLogger)
        let first = try await withRunning([next]) { try await receive(1, from: next)[0] }
        #expect(first.value == bytes("new 0"))
    }
}

/// The settings a service runs with on the local broker (`deploy/up.sh`: the defaults but for a
/// 2 s session, tansu holding a group's join for half of it), not the tests' quick ones, after
/// an outage: what a service does when the broker comes back empty.
@Suite("Kafka convergence after an outage")
struct KafkaConvergenceTests {
    @Test func aRecordSentAfterTheBrokerReturnsEmptyIsConsumedWithinFiveSeconds() async throws {
        let broker = try await TestBroker.start()
        defer { broker.stop() }
        let configuration = KafkaConfiguration(brokers: broker.brokers, sessionTimeout: .seconds(2), heartbeatInterval: .seconds(2) / 6)
        let topic = uniqueName("converge")
        try await KafkaTopics.create([topic], configuration: configuration)
        let producer = try KafkaProducer(configuration: configuration, logger: testLogger)
        let consumer = try KafkaConsumer(configuration: configuration, groupID: uniqueName("group"), topics: [topic], logger: testLogger)

        try await withRunning([producer, consumer]) {
            _ = try await producer.send(KafkaOutgoingMessage(topic: topic, key: "k", value: bytes("before")))
            try await consumer.commit(try await receive(1, from: consumer))
            broker.stop()
            try await Task.sleep(for: .seconds(10))
            try await broker.start()
            let back = ContinuousClock.now
            // As the outbox relay does on its first send to the empty broker.
            try await KafkaTopics.create([topic], configuration: configuration)
            _ = try await sendRetrying(KafkaOutgoingMessage(topic: topic, key: "k", value: bytes("after")), with: producer, for: .seconds(30))
            let after = try await receive(1, from: consumer, within: .seconds(40))[0]
            let consumed = back.duration(to: .now)
            #expect(after.value == bytes("after"))
            #expect(consumed < .seconds(5), "consumed \(consumed) after the broker's return")
        }
    }
}

/// Sends until the broker takes it (it may still be starting), for at most `limit`.
func sendRetrying(_ message: KafkaOutgoingMessage, with producer: KafkaProducer, for limit: Duration) async throws -> KafkaDeliveryReport {
    let deadline = ContinuousClock.now + limit
    while true {
        do {
            return try await producer.send(message)
        } catch where ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(200))
        }
    }
}

@Suite("Kafka topics that appear late")
struct KafkaLateTopicTests {
    @Test func consumerStartedBeforeItsTopicExistsReceivesOnceItIsCreated() async throws {
        let configuration = try testConfiguration()
        let topic = uniqueName("late")
        let producer = try KafkaProducer(configuration: configuration, logger: testLogger)
        let consumer = try KafkaConsumer(configuration: configuration, groupID: uniqueName("group"), topics: [topic], logger: testLogger)

        let received = try await withRunning([producer, consumer]) {
            try await Task.sleep(for: .seconds(3))
            try await KafkaTopics.create([topic], partitions: 1, configuration: configuration)
            _ = try await producer.send(KafkaOutgoingMessage(topic: topic, value: bytes("late")))
            return try await receive(1, from: consumer, within: .seconds(20))[0]
        }

        #expect(received.value == bytes("late"))
    }
}
