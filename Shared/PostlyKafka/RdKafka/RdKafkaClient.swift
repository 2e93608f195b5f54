import CRdKafka
import Foundation
import Logging
import Synchronization

/// What librdkafka's C callbacks need from Swift, reached through the client's opaque
/// pointer (`rd_kafka_opaque`). Its owner keeps it alive until after `rd_kafka_destroy`.
final class RdKafkaCallbackContext: Sendable {
    let logger: Logger
    /// A consumer's partitions taken away in a rebalance (called on its poll thread).
    let onRevoke: @Sendable (Set<KafkaTopicPartition>) -> Void
    /// A consumer got partitions: it knows the cluster's topics (and their ids).
    let wasAssigned = Atomic(false)
    /// Every broker went away (librdkafka's "all brokers down").
    let brokersLost = Atomic(false)

    init(logger: Logger, onRevoke: @escaping @Sendable (Set<KafkaTopicPartition>) -> Void = { _ in }) {
        self.logger = logger
        self.onRevoke = onRevoke
    }

    var opaque: UnsafeMutableRawPointer {
        Unmanaged.passUnretained(self).toOpaque()
    }

    static func from(_ kafka: OpaquePointer?) -> RdKafkaCallbackContext? {
        guard let kafka, let opaque = rd_kafka_opaque(kafka) else { return nil }
        return Unmanaged<RdKafkaCallbackContext>.fromOpaque(opaque).takeUnretainedValue()
    }
}

/// Creating librdkafka clients: configuration from properties, logs into swift-log.
enum RdKafkaClient {
    /// A new client of `type`. `configure` may add callbacks to the configuration before
    /// librdkafka takes it over.
    static func make(
        _ type: rd_kafka_type_t,
        properties: [String: String],
        context: RdKafkaCallbackContext,
        configure: (OpaquePointer) -> Void = { _ in }
    ) throws -> OpaquePointer {
        guard let conf = rd_kafka_conf_new() else { throw KafkaError.configuration("rd_kafka_conf_new failed") }
        for (name, value) in properties.sorted(by: { $0.key < $1.key }) {
            let (result, reason) = withErrorText { rd_kafka_conf_set(conf, name, value, $0, $1) }
            if result != RD_KAFKA_CONF_OK {
                rd_kafka_conf_destroy(conf)
                throw KafkaError.configuration("\(name): \(reason)")
            }
        }
        rd_kafka_conf_set_opaque(conf, context.opaque)
        rd_kafka_conf_set_log_cb(conf, logCallback)
        configure(conf)
        // rd_kafka_new owns the configuration only when it succeeds.
        let (client, reason) = withErrorText { rd_kafka_new(type, conf, $0, $1) }
        guard let client else {
            rd_kafka_conf_destroy(conf)
            throw KafkaError.configuration(reason)
        }
        return client
    }

    /// Destroys a client that has given its answer on a thread of its own, without waiting:
    /// rd_kafka_destroy takes a whole second now and then (one time in three to six here: a
    /// broker thread finishing its wait), which held a service's start and its readiness.
    /// `context` lives until then.
    static func destroyInBackground(_ client: OpaquePointer, context: RdKafkaCallbackContext) {
        let handle = RdKafkaHandle(client: client)
        Thread.detachNewThread { withExtendedLifetime(context) { rd_kafka_destroy(handle.client) } }
    }

    /// Calls `body` with an error text buffer of librdkafka's usual shape and returns its
    /// result and the text.
    static func withErrorText<T>(_ body: (UnsafeMutablePointer<CChar>, Int) -> T) -> (T, String) {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 512) { buffer in
            buffer.initialize(repeating: 0)
            let result = body(buffer.baseAddress!, buffer.count)
            return (result, String(cString: buffer.baseAddress!))
        }
    }
}

/// librdkafka's log lines (from its own threads) into the client's logger. Its level 3
/// ("error") is mostly a broker that is down, which callers already see as failed sends:
/// a warning, so a broker outage doesn't flood the error log.
private let logCallback: @convention(c) (OpaquePointer?, Int32, UnsafePointer<CChar>?, UnsafePointer<CChar>?) -> Void = {
    client, level, facility, line in
    guard let context = RdKafkaCallbackContext.from(client) else { return }
    let swiftLevel: Logger.Level =
        switch level {
        case ...2: .critical
        case 3, 4: .warning
        case 5: .notice
        case 6: .info
        default: .debug
        }
    context.logger.log(
        level: swiftLevel,
        "\(line.map { String(cString: $0) } ?? "")",
        metadata: ["kafka.facility": "\(facility.map { String(cString: $0) } ?? "")"]
    )
}

extension rd_kafka_resp_err_t {
    var text: String { String(cString: rd_kafka_err2str(self)) }
}

extension KafkaError {
    /// The error a caller acts on for a librdkafka error code.
    init(delivery code: rd_kafka_resp_err_t) {
        switch code {
        case RD_KAFKA_RESP_ERR__MSG_TIMED_OUT, RD_KAFKA_RESP_ERR__TIMED_OUT, RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT:
            self = .timedOut
        case RD_KAFKA_RESP_ERR__TRANSPORT, RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN, RD_KAFKA_RESP_ERR__RESOLVE:
            self = .brokerUnavailable
        case RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC, RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART:
            self = .unknownTopic
        case RD_KAFKA_RESP_ERR__PURGE_QUEUE, RD_KAFKA_RESP_ERR__PURGE_INFLIGHT, RD_KAFKA_RESP_ERR__DESTROY:
            self = .closed
        case RD_KAFKA_RESP_ERR__FATAL:
            self = .fatal(code.text)
        default:
            self = .deliveryFailed(code.text)
        }
    }
}

/// A client's C handle. librdkafka allows calls on it from any thread; only its owner
/// destroys it.
struct RdKafkaHandle: @unchecked Sendable {
    let client: OpaquePointer
}
