import Foundation
import Logging
import PostlyKafka
import Testing
import TestSupport

/// Latency and throughput held to loose bounds, so a busy machine still passes; the numbers
/// themselves are measured in bench/.
@Suite("Kafka latency and throughput", .serialized)
struct KafkaMeasurementTests {
    @Test func recordArrivesWellUnderASecondAfterSend() async throws {
        let configuration = try testConfiguration()
        let topic = uniqueName("latency")
        try await KafkaTopics.create([topic], partitions: 1, configuration: configuration)
        let producer = try KafkaProducer(configuration: configuration, logger: testLogger)
        let consumer = try KafkaConsumer(configuration: configuration, groupID: uniqueName("group"), topics: [topic], logger: testLogger)

        let delays = try await withRunning([producer, consumer]) {
            // The first record waits for the group join; the ones after it show the steady delay.
            _ = try await producer.send(KafkaOutgoingMessage(topic: topic, value: bytes("warm-up")))
            _ = try await receive(1, from: consumer)
            var delays: [Duration] = []
            for index in 0..<20 {
                let sent = ContinuousClock.now
                _ = try await producer.send(KafkaOutgoingMessage(topic: topic, value: bytes("\(index)")))
                _ = try await receive(1, from: consumer)
                delays.append(ContinuousClock.now - sent)
            }
            return delays.sorted()
        }

        #expect(delays[10] < .milliseconds(500), "p50 \(delays[10]), max \(delays[19])")
    }

    @Test func fiveThousandConcurrentSends() async throws {
        let configuration = try testConfiguration(messageTimeout: .seconds(30))
        let topic = uniqueName("throughput")
        try await KafkaTopics.create([topic], partitions: 3, configuration: configuration)
        let producer = try KafkaProducer(configuration: configuration, logger: testLogger)
        let count = 5000
        let value = [UInt8](repeating: 42, count: 512)

        let offsets = try await withRunning([producer]) {
            try await withThrowingTaskGroup(of: KafkaDeliveryReport.self) { group in
                for index in 0..<count {
                    group.addTask {
                        try await producer.send(KafkaOutgoingMessage(topic: topic, key: "key-\(index % 100)", value: value))
                    }
                }
                return try await group.reduce(into: Set<String>()) { $0.insert("\($1.partition)/\($1.offset)") }
            }
        }

        #expect(offsets.count == count, "every record at its own offset")
    }
}
