import Foundation
import Logging
import PostlyKafka
import ServiceLifecycle

/// Settings that make tests quick on tansu: group joins in about 1.5 s, fetches answered
/// within 100 ms, topics found within a second.
public func testConfiguration(brokers: String? = nil, messageTimeout: Duration = .seconds(10)) throws -> KafkaConfiguration {
    KafkaConfiguration(
        brokers: try brokers ?? TestEnvironment.kafkaBrokers,
        clientID: "postly-tests",
        messageTimeout: messageTimeout,
        shutdownFlushTimeout: .seconds(2),
        sessionTimeout: .seconds(3),
        heartbeatInterval: .milliseconds(500),
        fetchWaitMax: .milliseconds(100),
        metadataRefreshInterval: .seconds(1)
    )
}

/// A topic or group name no other test uses.
public func uniqueName(_ prefix: String) -> String {
    "\(prefix)-\(UUID().uuidString.lowercased())"
}

public let testLogger: Logger = {
    var logger = Logger(label: "postly.tests")
    logger.logLevel = .warning
    return logger
}()

public struct TimedOut: Error, CustomStringConvertible {
    public let waitingFor: String
    public init(waitingFor: String) { self.waitingFor = waitingFor }
    public var description: String { "timed out waiting for \(waitingFor)" }
}

/// Runs the services beside `body`, then cancels them and waits until their `run()` returned.
public func withRunning<T: Sendable>(_ services: [any Service], _ body: () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: Void.self) { group in
        for service in services {
            group.addTask { try await service.run() }
        }
        do {
            let result = try await body()
            group.cancelAll()
            try await group.waitForAll()
            return result
        } catch {
            group.cancelAll()
            try? await group.waitForAll()
            throw error
        }
    }
}

/// The next `count` records the consumer receives, or `TimedOut`.
public func receive(_ count: Int, from consumer: KafkaConsumer, within timeout: Duration = .seconds(30)) async throws -> [KafkaMessage] {
    try await withThrowingTaskGroup(of: [KafkaMessage]?.self) { group in
        group.addTask {
            var received: [KafkaMessage] = []
            for await message in consumer.messages {
                received.append(message)
                if received.count == count { break }
            }
            return received
        }
        group.addTask {
            try await Task.sleep(for: timeout)
            return nil
        }
        defer { group.cancelAll() }
        guard let received = try await group.next(), let received, received.count == count else {
            throw TimedOut(waitingFor: "\(count) records")
        }
        return received
    }
}

public func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

/// The partitions that 30 records with different keys land in, as their delivery reports
/// tell. The partitioner hashes each key over every partition the topic has, so with this
/// many keys `[0, 1, 2]` says the topic has three partitions, no fewer and no more (the keys
/// are fixed: the answer is the same every run).
public func partitionsReached(in topic: String, by producer: KafkaProducer) async throws -> Set<Int32> {
    let records = (0..<30).map { KafkaOutgoingMessage(topic: topic, key: "partition-probe-\($0)", value: bytes("probe")) }
    return Set(try await producer.send(records).map { try $0.get().partition })
}
