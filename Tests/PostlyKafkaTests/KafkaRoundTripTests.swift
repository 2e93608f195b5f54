import Foundation
import Logging
import PostlyKafka
import ServiceLifecycle
import Testing
import TestSupport

@Suite("Kafka produce and consume")
struct KafkaRoundTripTests {
    @Test func producedRecordIsConsumedWithKeyValueAndHeaders() async throws {
        let configuration = try testConfiguration()
        let topic = uniqueName("round-trip")
        try await KafkaTopics.create([topic], configuration: configuration)
        let producer = try KafkaProducer(configuration: configuration, logger: testLogger)
        let consumer = try KafkaConsumer(configuration: configuration, groupID: uniqueName("group"), topics: [topic], logger: testLogger)
        let headers = [KafkaHeader(name: "type", value: "post.created"), KafkaHeader(name: "binary", value: [0, 1, 255]), KafkaHeader(name: "empty", value: [])]
        let sent = KafkaOutgoingMessage(topic: topic, key: "post-1", value: bytes(#"{"title":"Grüße"}"#), headers: headers)

        let (report, received) = try await withRunning([producer, consumer]) {
            let report = try await producer.send(sent)
            return (report, try await receive(1, from: consumer)[0])
        }

        #expect(report.topic == topic)
        #expect(report.offset >= 0)
        #expect(received.topic == topic)
        #expect(received.partition == report.partition)
        #expect(received.offset == report.offset)
        #expect(received.key == "post-1")
        #expect(received.value == sent.value)
        #expect(received.headers == headers)
        #expect(received.header("type") == bytes("post.created"))
    }

    @Test func recordWithoutKeyOrHeadersRoundTrips() async throws {
        let configuration = try testConfiguration()
        let topic = uniqueName("no-key")
        try await KafkaTopics.create([topic], partitions: 1, configuration: configuration)
        let producer = try KafkaProducer(configuration: configuration, logger: testLogger)
        let consumer = try KafkaConsumer(configuration: configuration, groupID: uniqueName("group"), topics: [topic], logger: testLogger)

        let received = try await withRunning([producer, consumer]) {
            _ = try await producer.send(KafkaOutgoingMessage(topic: topic, value: bytes("plain")))
            return try await receive(1, from: consumer)[0]
        }

        #expect(received.key == nil)
        #expect(received.value == bytes("plain"))
        #expect(received.headers.isEmpty)
    }

    @Test func recordsWithTheSameKeyArriveInOrder() async throws {
        let configuration = try testConfiguration()
        let topic = uniqueName("ordering")
        try await KafkaTopics.create([topic], partitions: 3, configuration: configuration)
        let producer = try KafkaProducer(configuration: configuration, logger: testLogger)
        let consumer = try KafkaConsumer(configuration: configuration, groupID: uniqueName("group"), topics: [topic], logger: testLogger)
        let keys = (0..<10).map { "post-\($0)" }
        let perKey = 20

        let received = try await withRunning([producer, consumer]) {
            // Keys in parallel, each key's records one after another.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for key in keys {
                    group.addTask {
                        for sequence in 0..<perKey {
                            _ = try await producer.send(KafkaOutgoingMessage(topic: topic, key: key, value: bytes("\(sequence)")))
                        }
                    }
                }
                try await group.waitForAll()
            }
            return try await receive(keys.count * perKey, from: consumer)
        }

        let sequences = Dictionary(grouping: received, by: { $0.key ?? "" }).mapValues { records in
            records.map { String(decoding: $0.value, as: UTF8.self) }
        }
        for key in keys {
            #expect(sequences[key] == (0..<perKey).map(String.init), "records of \(key)")
        }
        let partitionsPerKey = Dictionary(grouping: received, by: { $0.key ?? "" }).mapValues { Set($0.map(\.partition)) }
        #expect(partitionsPerKey.values.allSatisfy { $0.count == 1 })
        #expect(Set(received.map(\.partition)).count > 1, "10 keys spread over 3 partitions")
    }

    @Test func uncommittedRecordIsRedeliveredAndCommittedRecordIsNot() async throws {
        let configuration = try testConfiguration()
        let topic = uniqueName("redelivery")
        let groupID = uniqueName("group")
        try await KafkaTopics.create([topic], partitions: 1, configuration: configuration)
        let producer = try KafkaProducer(configuration: configuration, logger: testLogger)

        try await withRunning([producer]) {
            let first = try await producer.send(KafkaOutgoingMessage(topic: topic, key: "k", value: bytes("first")))

            // Received but not committed: the group's next consumer gets it again.
            let uncommitting = try KafkaConsumer(configuration: configuration, groupID: groupID, topics: [topic], logger: testLogger)
            let seenFirst = try await withRunning([uncommitting]) { try await receive(1, from: uncommitting)[0] }
            #expect(seenFirst.offset == first.offset)

            let committing = try KafkaConsumer(configuration: configuration, groupID: groupID, topics: [topic], logger: testLogger)
            let seenAgain = try await withRunning([committing]) {
                let message = try await receive(1, from: committing)[0]
                try await committing.commit([message])
                return message
            }
            #expect(seenAgain.offset == first.offset)
            #expect(seenAgain.value == bytes("first"))

            // Committed: the next consumer starts after it.
            let second = try await producer.send(KafkaOutgoingMessage(topic: topic, key: "k", value: bytes("second")))
            let next = try KafkaConsumer(configuration: configuration, groupID: groupID, topics: [topic], logger: testLogger)
            let seenNext = try await withRunning([next]) { try await receive(1, from: next)[0] }
            #expect(seenNext.offset == second.offset)
            #expect(seenNext.value == bytes("second"))
        }
    }

    /// A batch spread over partitions is committed in one request: each partition up to its
    /// last record of the batch, whatever order the records came in.
    @Test func oneCommitOfABatchCoversEachPartitionUpToItsLastRecord() async throws {
        let configuration = try testConfiguration()
        let topic = uniqueName("batch-commit")
        let groupID = uniqueName("group")
        try await KafkaTopics.create([topic], partitions: 3, configuration: configuration)
        let producer = try KafkaProducer(configuration: configuration, logger: testLogger)

        try await withRunning([producer]) {
            for n in 0..<30 { _ = try await producer.send(KafkaOutgoingMessage(topic: topic, key: "key \(n % 10)", value: bytes("before \(n)"))) }
            let committing = try KafkaConsumer(configuration: configuration, groupID: groupID, topics: [topic], logger: testLogger)
            let batch = try await withRunning([committing]) {
                let batch = try await receive(30, from: committing)
                try await committing.commit(batch.shuffled())
                return batch
            }
            #expect(Set(batch.map(\.partition)).count > 1, "10 keys spread over 3 partitions")

            for n in 0..<10 { _ = try await producer.send(KafkaOutgoingMessage(topic: topic, key: "key \(n)", value: bytes("after \(n)"))) }
            let next = try KafkaConsumer(configuration: configuration, groupID: groupID, topics: [topic], logger: testLogger)
            let seen = try await withRunning([next]) { try await receive(10, from: next) }
            #expect(Set(seen.map { String(decoding: $0.value, as: UTF8.self) }) == Set((0..<10).map { "after \($0)" }))
        }
    }

    @Test func topicCreationIsIdempotent() async throws {
        let configuration = try testConfiguration()
        let existing = uniqueName("idempotent")
        let new = uniqueName("idempotent-new")
        try await KafkaTopics.create([existing], partitions: 1, configuration: configuration)
        try await KafkaTopics.create([existing], configuration: configuration)
        try await KafkaTopics.create([existing, new], configuration: configuration)
        let producer = try KafkaProducer(configuration: configuration, logger: testLogger)
        let reached = try await withRunning([producer]) {
            (existing: try await partitionsReached(in: existing, by: producer), new: try await partitionsReached(in: new, by: producer))
        }
        #expect(reached.existing == [0], "left with its one partition")
        #expect(reached.new == [0, 1, 2])
    }

    /// Only `KafkaTopics.create` makes topics: a producer's metadata request for a missing one
    /// would otherwise make it with the broker's default partition count (tansu honours the
    /// request's `allow_auto_topic_creation`).
    @Test func sendingToAMissingTopicFailsAndCreatesNothing() async throws {
        let configuration = try testConfiguration(messageTimeout: .seconds(10))
        let topic = uniqueName("missing")
        let producer = try KafkaProducer(configuration: configuration, logger: testLogger)

        let started = ContinuousClock.now
        let failure = try await withRunning([producer]) { () async -> KafkaError? in
            do {
                _ = try await producer.send(KafkaOutgoingMessage(topic: topic, value: bytes("nowhere")))
                return nil
            } catch {
                return error as? KafkaError
            }
        }

        #expect(failure == .unknownTopic)
        #expect(ContinuousClock.now - started < .seconds(5), "fails long before the message timeout")
        // Had the first send made the topic, another producer's send would now be delivered.
        let next = try KafkaProducer(configuration: configuration, logger: testLogger)
        let nextFailure = try await withRunning([next]) { () async -> KafkaError? in
            do {
                _ = try await next.send(KafkaOutgoingMessage(topic: topic, value: bytes("still nowhere")))
                return nil
            } catch {
                return error as? KafkaError
            }
        }
        #expect(nextFailure == .unknownTopic)
    }

    /// Static membership (`group.instance.id`) is accepted by librdkafka and by the broker: a
    /// member under a stable name joins its group and reads.
    ///
    /// tansu holds a static member's join and its sync 3 s each, and librdkafka gives a sync
    /// the session plus 3 s: the tests' 3 s session left 3 s to spare, which a loaded machine
    /// once used up (and the rejoins after it took past 30 s). A service's session is 6 s.
    @Test func aStaticMemberJoinsItsGroupAndReads() async throws {
        var configuration = try testConfiguration()
        configuration.groupInstanceID = uniqueName("instance")
        configuration.sessionTimeout = .seconds(10)
        let topic = uniqueName("static")
        try await KafkaTopics.create([topic], configuration: configuration)
        let producer = try KafkaProducer(configuration: configuration, logger: testLogger)
        let consumer = try KafkaConsumer(configuration: configuration, groupID: uniqueName("group"), topics: [topic], logger: testLogger)
        let received = try await withRunning([producer, consumer]) {
            _ = try await producer.send(KafkaOutgoingMessage(topic: topic, key: "k", value: bytes("static")))
            return try await receive(1, from: consumer)[0]
        }
        #expect(received.value == bytes("static"))
    }

    @Test func invalidPropertyIsAConfigurationError() throws {
        var configuration = try testConfiguration()
        configuration.extra["no.such.property"] = "1"
        #expect {
            _ = try KafkaProducer(configuration: configuration, logger: testLogger)
        } throws: { error in
            guard case KafkaError.configuration(let reason) = error else { return false }
            return reason.contains("no.such.property")
        }
    }
}
