import CRdKafka
import Foundation
import Logging
import ServiceLifecycle
import Synchronization

/// A member of a consumer group. `run()` polls on a thread of its own and feeds
/// `messages`; offsets move only through `commit(_:)`, so a record that was not committed
/// comes again to the group's next consumer. On graceful shutdown or cancellation it
/// leaves the group (`rd_kafka_consumer_close`), finishes `messages` and returns.
///
/// When every broker goes away after the consumer had joined its group, it continues with
/// a new librdkafka client (see `replace`): a broker that comes back empty (tansu keeps
/// everything in memory) or with re-created topics is read from `autoOffsetReset` once the
/// topics exist again. A topic that does not exist yet is found within
/// `metadataRefreshInterval` of its creation.
public final class KafkaConsumer: Service, Sendable {
    public let messages: KafkaConsumerMessages
    public let groupID: String
    public let topics: [String]
    private let buffer: KafkaMessageBuffer
    private let properties: [String: String]
    /// Replaced by the poll thread after every broker went away.
    private let current: Mutex<RdKafkaConsumerClient>
    private let lifecycle = Mutex(Lifecycle.idle)
    private let stopRequested = Atomic(false)
    private let logger: Logger

    private enum Lifecycle { case idle, running, closed }

    private struct Partition: Hashable {
        let topic: String
        let number: Int32
    }

    public init(
        configuration: KafkaConfiguration,
        groupID: String,
        topics: [String],
        logger: Logger,
        autoOffsetReset: KafkaOffsetReset = .earliest
    ) throws {
        guard !topics.isEmpty else { throw KafkaError.configuration("a consumer needs at least one topic") }
        self.groupID = groupID
        self.topics = topics
        var logger = logger
        logger[metadataKey: "kafka.group"] = "\(groupID)"
        self.logger = logger
        let buffer = KafkaMessageBuffer(capacity: 64)
        self.buffer = buffer
        messages = KafkaConsumerMessages(buffer: buffer)
        properties = configuration.consumerProperties(groupID: groupID, offsetReset: autoOffsetReset)
        current = Mutex(try Self.makeClient(number: 0, properties: properties, logger: logger, buffer: buffer))
    }

    private static func makeClient(
        number: Int, properties: [String: String], logger: Logger, buffer: KafkaMessageBuffer
    ) throws -> RdKafkaConsumerClient {
        let context = RdKafkaCallbackContext(logger: logger) { revoked in buffer.removeAll(of: revoked) }
        let client = try RdKafkaClient.make(RD_KAFKA_CONSUMER, properties: properties, context: context) {
            rd_kafka_conf_set_rebalance_cb($0, rebalanceCallback)
            rd_kafka_conf_set_error_cb($0, consumerErrorCallback)
        }
        // Everything (records, errors, rebalances) through rd_kafka_consumer_poll.
        rd_kafka_poll_set_consumer(client)
        return RdKafkaConsumerClient(number: number, handle: RdKafkaConsumerHandle(client: client), context: context)
    }

    public func run() async throws {
        try lifecycle.withLock { state throws(KafkaError) in
            guard case .idle = state else { throw .configuration("KafkaConsumer.run() called twice") }
            state = .running
        }
        await withTaskCancellationHandler {
            await withGracefulShutdownHandler {
                await withCheckedContinuation { (finished: CheckedContinuation<Void, Never>) in
                    let thread = Thread {
                        self.pollUntilStopped()
                        finished.resume()
                    }
                    thread.name = "kafka-consumer"
                    thread.start()
                }
            } onGracefulShutdown: {
                self.stopRequested.store(true, ordering: .releasing)
            }
        } onCancel: {
            self.stopRequested.store(true, ordering: .releasing)
        }
    }

    /// Commits, for each partition of `messages`, the offset after its last one, in one request,
    /// and returns once the broker has stored them: the group's next consumer of a partition
    /// starts after the latest of `messages` it held.
    ///
    /// Messages an earlier client delivered (before `replace`) are not committed: their offsets
    /// belong to logs the broker may have lost, and committed into the group now they could put
    /// its next consumer past the first records of the new logs. Those records come again
    /// instead, and change nothing where they were applied.
    public func commit(_ messages: [KafkaMessage]) async throws {
        guard lifecycle.withLock({ $0 }) != .closed else { throw KafkaError.closed }
        let code = await runBlocking { [self] in
            // Taken here, so a replaced client's last reference (its rd_kafka_destroy) goes on
            // this thread, not the cooperative pool.
            let client = current.withLock { $0 }
            var next: [Partition: Int64] = [:]
            for message in messages where message.client == client.number {
                let partition = Partition(topic: message.topic, number: message.partition)
                next[partition] = max(next[partition] ?? 0, message.offset + 1)
            }
            guard !next.isEmpty else { return RD_KAFKA_RESP_ERR_NO_ERROR }
            let handle = client.handle
            guard let list = rd_kafka_topic_partition_list_new(Int32(next.count)) else { return RD_KAFKA_RESP_ERR__FAIL }
            defer { rd_kafka_topic_partition_list_destroy(list) }
            for (partition, offset) in next {
                rd_kafka_topic_partition_list_add(list, partition.topic, partition.number).pointee.offset = offset
            }
            return rd_kafka_commit(handle.client, list, 0)
        }
        guard code == RD_KAFKA_RESP_ERR_NO_ERROR else {
            if lifecycle.withLock({ $0 }) == .closed { throw KafkaError.closed }
            throw KafkaError.commitFailed(code.text)
        }
    }

    /// The poll thread: blocking polls of at most 100 ms, so a stop request is seen quickly.
    private func pollUntilStopped() {
        var client = current.withLock { $0 }
        subscribe(client.handle)
        while !stopRequested.load(ordering: .acquiring) {
            if client.context.brokersLost.load(ordering: .relaxed), client.context.wasAssigned.load(ordering: .relaxed) {
                if let fresh = replace(client) {
                    client = fresh
                    subscribe(client.handle)
                } else {
                    Thread.sleep(forTimeInterval: 1)
                }
                continue
            }
            if buffer.isFull {
                Thread.sleep(forTimeInterval: 0.002)
                continue
            }
            guard let message = rd_kafka_consumer_poll(client.handle.client, 100) else { continue }
            defer { rd_kafka_message_destroy(message) }
            let code = message.pointee.err
            if code == RD_KAFKA_RESP_ERR_NO_ERROR {
                buffer.append(KafkaMessage(message, client: client.number))
            } else if code == RD_KAFKA_RESP_ERR__FATAL {
                let (_, reason) = RdKafkaClient.withErrorText { rd_kafka_fatal_error(client.handle.client, $0, $1) }
                logger.error("Kafka consumer failed fatally; it stops", metadata: ["kafka.error": "\(reason)"])
                break
            } else if code != RD_KAFKA_RESP_ERR__PARTITION_EOF {
                logger.warning("Kafka consumer error", metadata: ["kafka.error": "\(errorText(message))"])
            }
        }
        lifecycle.withLock { $0 = .closed }
        let code = rd_kafka_consumer_close(client.handle.client)
        if code != RD_KAFKA_RESP_ERR_NO_ERROR {
            logger.warning("Kafka consumer close", metadata: ["kafka.error": "\(code.text)"])
        }
        buffer.finish()
        logger.debug("Kafka consumer closed")
    }

    /// A new librdkafka client after every broker went away, on the poll thread. The broker
    /// that comes back may have lost its topics, records and offsets (tansu) or re-created
    /// the topics with new ids: the old client's fetch positions belong to logs that are gone,
    /// and fetching the new logs from them would skip their first records. A new client joins
    /// the group afresh and starts from the offsets the group committed there (none: the
    /// earliest). Records received and not yet read are dropped: they were not committed.
    private func replace(_ old: RdKafkaConsumerClient) -> RdKafkaConsumerClient? {
        logger.warning("Kafka brokers lost: the consumer starts over with a new client")
        buffer.removeAll()
        do {
            let fresh = try Self.makeClient(number: old.number + 1, properties: properties, logger: logger, buffer: buffer)
            current.withLock { $0 = fresh }
            // The old client is destroyed here, or when a commit still using it returns.
            return fresh
        } catch {
            logger.error("Kafka consumer could not replace its client", metadata: ["kafka.error": "\(error)"])
            return nil
        }
    }

    private func subscribe(_ handle: RdKafkaConsumerHandle) {
        guard let list = rd_kafka_topic_partition_list_new(Int32(topics.count)) else { return }
        defer { rd_kafka_topic_partition_list_destroy(list) }
        for topic in topics {
            // The partition is ignored for a subscription (-1: RD_KAFKA_PARTITION_UA).
            rd_kafka_topic_partition_list_add(list, topic, -1)
        }
        let code = rd_kafka_subscribe(handle.client, list)
        if code != RD_KAFKA_RESP_ERR_NO_ERROR {
            logger.error("Kafka subscribe failed", metadata: ["kafka.error": "\(code.text)", "kafka.topics": "\(topics)"])
        }
    }

    private func errorText(_ message: UnsafeMutablePointer<rd_kafka_message_t>) -> String {
        let reason = String(cString: rd_kafka_message_errstr(message))
        guard let topic = message.pointee.rkt else { return reason }
        return "\(String(cString: rd_kafka_topic_name(topic))): \(reason)"
    }
}

/// The consumer's C handle. librdkafka allows calls on it from any thread: the poll
/// thread polls and closes it, `commit` commits through it, and only
/// `RdKafkaConsumerClient.deinit` destroys it, when nothing else holds the client.
struct RdKafkaConsumerHandle: @unchecked Sendable {
    let client: OpaquePointer
}

/// One librdkafka consumer instance; a `KafkaConsumer` replaces it after losing every broker.
final class RdKafkaConsumerClient: Sendable {
    /// 0 for a consumer's first client, one more for each that replaces it.
    let number: Int
    let handle: RdKafkaConsumerHandle
    /// Kept alive until after rd_kafka_destroy: the callbacks use it.
    let context: RdKafkaCallbackContext

    init(number: Int, handle: RdKafkaConsumerHandle, context: RdKafkaCallbackContext) {
        self.number = number
        self.handle = handle
        self.context = context
    }

    deinit {
        // run() closed it already (leaving the group), or the brokers are gone: no close here.
        rd_kafka_destroy_flags(handle.client, RD_KAFKA_DESTROY_F_NO_CONSUMER_CLOSE)
    }
}

/// Errors not tied to a record, served on the poll thread inside rd_kafka_consumer_poll.
private let consumerErrorCallback: @convention(c) (OpaquePointer?, Int32, UnsafePointer<CChar>?, UnsafeMutableRawPointer?) -> Void = {
    client, code, reason, _ in
    guard let client, let context = RdKafkaCallbackContext.from(client) else { return }
    let reason = reason.map { String(cString: $0) } ?? rd_kafka_resp_err_t(rawValue: code).text
    switch rd_kafka_resp_err_t(rawValue: code) {
    case RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN:
        context.logger.warning("Kafka consumer error", metadata: ["kafka.error": "\(reason)"])
        // Only a client that has been in the group holds metadata of the lost cluster.
        if context.wasAssigned.load(ordering: .relaxed) {
            context.brokersLost.store(true, ordering: .relaxed)
            // Out of the current poll now, so the poll thread can act before the brokers return.
            rd_kafka_yield(client)
        }
    case RD_KAFKA_RESP_ERR__FATAL:
        context.logger.error("Kafka consumer failed fatally", metadata: ["kafka.error": "\(reason)"])
    default:
        // librdkafka has logged the cause already (a connection failure, say).
        context.logger.debug("Kafka consumer error", metadata: ["kafka.error": "\(reason)"])
    }
}

extension KafkaMessage {
    /// Copies a record out of librdkafka's memory (the pointer, not a copy of the struct:
    /// librdkafka finds the headers around it).
    init(_ pointer: UnsafeMutablePointer<rd_kafka_message_t>, client: Int) {
        let message = pointer.pointee
        self.client = client
        topic = String(cString: rd_kafka_topic_name(message.rkt))
        partition = message.partition
        offset = message.offset
        key = message.key.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: message.key_len), as: UTF8.self) }
        value = message.payload.map { Array(UnsafeRawBufferPointer(start: $0, count: message.len)) } ?? []
        headers = []
        var cHeaders: OpaquePointer?
        _ = rd_kafka_message_headers(pointer, &cHeaders)
        guard let cHeaders else { return }
        var index = 0
        var name: UnsafePointer<CChar>?
        var value: UnsafeRawPointer?
        var size = 0
        while rd_kafka_header_get_all(cHeaders, index, &name, &value, &size) == RD_KAFKA_RESP_ERR_NO_ERROR {
            let bytes = value.map { Array(UnsafeRawBufferPointer(start: $0, count: size)) } ?? []
            headers.append(KafkaHeader(name: name.map { String(cString: $0) } ?? "", value: bytes))
            index += 1
        }
    }
}

/// Runs on the poll thread inside rd_kafka_consumer_poll. Eager groups assign and
/// unassign everything; cooperative-sticky groups must use the incremental calls.
private let rebalanceCallback:
    @convention(c) (OpaquePointer?, rd_kafka_resp_err_t, UnsafeMutablePointer<rd_kafka_topic_partition_list_t>?, UnsafeMutableRawPointer?) -> Void = {
        client, code, partitions, _ in
        guard let client else { return }
        let context = RdKafkaCallbackContext.from(client)
        let cooperative = rd_kafka_rebalance_protocol(client).map { String(cString: $0) } == "COOPERATIVE"
        let changed = partitions.map(topicPartitions) ?? []
        let description = changed.map { "\($0.topic)[\($0.partition)]" }.sorted().joined(separator: ", ")
        switch code {
        case RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS:
            context?.logger.info("Kafka partitions assigned", metadata: ["kafka.partitions": "\(description)"])
            context?.wasAssigned.store(true, ordering: .relaxed)
            context?.brokersLost.store(false, ordering: .relaxed)
            if cooperative {
                report(rd_kafka_incremental_assign(client, partitions), to: context)
            } else {
                rd_kafka_assign(client, partitions)
            }
        case RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS:
            context?.logger.info("Kafka partitions revoked", metadata: ["kafka.partitions": "\(description)"])
            context?.onRevoke(Set(changed))
            if cooperative {
                report(rd_kafka_incremental_unassign(client, partitions), to: context)
            } else {
                rd_kafka_assign(client, nil)
            }
        default:
            context?.logger.warning("Kafka rebalance failed", metadata: ["kafka.error": "\(code.text)"])
            context?.onRevoke(Set(changed))
            rd_kafka_assign(client, nil)
        }
    }

private func topicPartitions(_ list: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>) -> [KafkaTopicPartition] {
    let elements = UnsafeBufferPointer(start: list.pointee.elems, count: Int(list.pointee.cnt))
    return elements.map { KafkaTopicPartition(topic: String(cString: $0.topic), partition: $0.partition) }
}

private func report(_ error: OpaquePointer?, to context: RdKafkaCallbackContext?) {
    guard let error else { return }
    context?.logger.warning("Kafka incremental rebalance failed", metadata: ["kafka.error": "\(String(cString: rd_kafka_error_string(error)))"])
    rd_kafka_error_destroy(error)
}
