import CRdKafka
import Logging
import ServiceLifecycle
import Synchronization

/// An idempotent producer (`acks=all`): `send` returns once the broker has stored the
/// record, or throws. `run()` must be running (in the service group) for sends to
/// complete: it serves librdkafka's delivery reports, and on graceful shutdown waits up to
/// `shutdownFlushTimeout` for records in flight before failing the rest.
///
/// After losing every broker it continues with a new librdkafka client (see `replace`), so
/// a broker that comes back empty (tansu) or with re-created topics is safe to use.
public final class KafkaProducer: Service, Sendable {
    /// What it was made with; `KafkaTopics.create` takes the same, to create missing topics.
    public let configuration: KafkaConfiguration
    private let properties: [String: String]
    private let context: RdKafkaCallbackContext
    private let wakeups = QueueWakeups()
    private let sends: Mutex<ProducerState>
    private let messageTimeout: Duration
    private let shutdownFlushTimeout: Duration
    private let logger: Logger

    public init(configuration: KafkaConfiguration, logger: Logger) throws {
        self.logger = logger
        self.configuration = configuration
        self.messageTimeout = configuration.messageTimeout
        self.shutdownFlushTimeout = configuration.shutdownFlushTimeout
        properties = configuration.producerProperties
        context = RdKafkaCallbackContext(logger: logger)
        let client = try Self.makeClient(properties: properties, context: context, wakeups: wakeups, generation: 0)
        sends = Mutex(ProducerState(client: client))
    }

    private static func makeClient(
        properties: [String: String],
        context: RdKafkaCallbackContext,
        wakeups: QueueWakeups,
        generation: Int
    ) throws -> RdKafkaProducerClient {
        let client = try RdKafkaClient.make(RD_KAFKA_PRODUCER, properties: properties, context: context) {
            // Delivery reports and errors as events on the main queue, served by run().
            rd_kafka_conf_set_events($0, RD_KAFKA_EVENT_DR | RD_KAFKA_EVENT_ERROR)
        }
        let handle = RdKafkaProducerHandle(client: client, events: rd_kafka_queue_get_main(client))
        rd_kafka_queue_cb_event_enable(handle.events, queueWakeupCallback, wakeups.opaque)
        // Events queued before the callback was set would otherwise wait for the next one.
        wakeups.continuation.yield()
        return RdKafkaProducerClient(handle: handle, context: context, wakeups: wakeups, generation: generation)
    }

    /// Sends one record and returns where the broker stored it. Throws `KafkaError`:
    /// `.timedOut` after `messageTimeout` without an acknowledgement, `.brokerUnavailable`
    /// when every broker went away while it was in flight, `.closed` once the producer is
    /// shutting down, `CancellationError` when the calling task is cancelled first: the wait
    /// ends at once, though the record may still be delivered (the caller, such as the outbox,
    /// keeps it until it has an acknowledgement).
    public func send(_ message: KafkaOutgoingMessage) async throws -> KafkaDeliveryReport {
        try await send([message])[0].get()
    }

    /// Sends `messages` in the given order, so one key's records keep their order, and
    /// returns each one's outcome once its delivery report (or failure) is in. All of them
    /// are in flight at once; each fails on its own, as `send(_:)` describes. Cancelling the
    /// calling task fails those not acknowledged yet with `CancellationError`, at once.
    public func send(_ messages: [KafkaOutgoingMessage]) async -> [Result<KafkaDeliveryReport, any Error>] {
        let outcomes = DeliveryOutcomes(count: messages.count)
        for (index, message) in messages.enumerated() {
            let deadline = ContinuousClock.now + messageTimeout
            while true {
                if Task.isCancelled {
                    outcomes.set(index, .failure(CancellationError()))
                    break
                }
                let code = enqueue(message) { outcomes.set(index, $0) }
                if code == RD_KAFKA_RESP_ERR_NO_ERROR { break }
                // librdkafka's own buffer is full: wait for deliveries to make room, and
                // retry this record before the next one to keep the order.
                if code == RD_KAFKA_RESP_ERR__QUEUE_FULL, ContinuousClock.now < deadline {
                    try? await Task.sleep(for: .milliseconds(5))
                    continue
                }
                let error: KafkaError =
                    switch code {
                    case RD_KAFKA_RESP_ERR__QUEUE_FULL: .timedOut
                    case RD_KAFKA_RESP_ERR__DESTROY: .closed
                    default: KafkaError(delivery: code)
                    }
                outcomes.set(index, .failure(error))
                break
            }
        }
        return await withTaskCancellationHandler {
            await outcomes.all()
        } onCancel: {
            outcomes.failRemaining(with: CancellationError())
        }
    }

    public func run() async throws {
        guard sends.withLock({ $0.startRunning() }) else { throw KafkaError.configuration("KafkaProducer.run() called twice") }
        await withTaskCancellationHandler {
            await withGracefulShutdownHandler {
                for await _ in wakeups.stream {
                    serveWaitingEvents()
                }
            } onGracefulShutdown: {
                self.wakeups.continuation.finish()
            }
        } onCancel: {
            self.wakeups.continuation.finish()
        }
        await shutDown()
    }

    /// Hands `message` to librdkafka; `complete` is called with its delivery report later,
    /// unless this returns an error code (then nothing was sent and `complete` is not called).
    private func enqueue(
        _ message: KafkaOutgoingMessage, complete: @escaping @Sendable (Result<KafkaDeliveryReport, any Error>) -> Void
    ) -> rd_kafka_resp_err_t {
        // Registered before producing: the delivery report may arrive before produce returns.
        guard let (id, client) = sends.withLock({ $0.register(complete) }) else { return RD_KAFKA_RESP_ERR__DESTROY }
        let code = produce(message, id: id, on: client.handle)
        guard code != RD_KAFKA_RESP_ERR_NO_ERROR else { return code }
        // Not sent; unless a broker loss already failed it, take it back.
        return sends.withLock({ $0.waiting.removeValue(forKey: id) }) != nil ? code : RD_KAFKA_RESP_ERR_NO_ERROR
    }

    /// Hands one record to librdkafka, which copies everything before returning. The id
    /// travels as the message's opaque pointer and comes back in its delivery report.
    private func produce(_ message: KafkaOutgoingMessage, id: UInt, on handle: RdKafkaProducerHandle) -> rd_kafka_resp_err_t {
        // Header names (NUL-terminated) and values in one buffer, so one closure pins them all.
        var headerBytes: [UInt8] = []
        var headerLayout: [(name: Int, value: Int, size: Int)] = []
        for header in message.headers {
            let name = headerBytes.count
            headerBytes += header.name.utf8
            headerBytes.append(0)
            headerLayout.append((name, headerBytes.count, header.value.count))
            headerBytes += header.value
        }
        let key = message.key.map { Array($0.utf8) }
        return message.topic.withCString { topic in
            message.value.withUnsafeBytes { value in
                (key ?? []).withUnsafeBytes { keyBytes in
                    headerBytes.withUnsafeBytes { headerBase in
                        var arguments: [rd_kafka_vu_t] = []
                        arguments.append(.init(RD_KAFKA_VTYPE_TOPIC) { $0.cstr = topic })
                        arguments.append(.init(RD_KAFKA_VTYPE_MSGFLAGS) { $0.i = RD_KAFKA_MSG_F_COPY })
                        arguments.append(
                            .init(RD_KAFKA_VTYPE_VALUE) {
                                $0.mem.ptr = UnsafeMutableRawPointer(mutating: value.baseAddress)
                                $0.mem.size = value.count
                            })
                        if key != nil {
                            arguments.append(
                                .init(RD_KAFKA_VTYPE_KEY) {
                                    $0.mem.ptr = UnsafeMutableRawPointer(mutating: keyBytes.baseAddress)
                                    $0.mem.size = keyBytes.count
                                })
                        }
                        for header in headerLayout {
                            arguments.append(
                                .init(RD_KAFKA_VTYPE_HEADER) {
                                    $0.header.name = (headerBase.baseAddress! + header.name).assumingMemoryBound(to: CChar.self)
                                    $0.header.val = headerBase.baseAddress! + header.value
                                    $0.header.size = header.size
                                })
                        }
                        arguments.append(.init(RD_KAFKA_VTYPE_OPAQUE) { $0.ptr = UnsafeMutableRawPointer(bitPattern: id) })
                        guard let error = rd_kafka_produceva(handle.client, arguments, arguments.count) else {
                            return RD_KAFKA_RESP_ERR_NO_ERROR
                        }
                        defer { rd_kafka_error_destroy(error) }
                        return rd_kafka_error_code(error)
                    }
                }
            }
        }
    }

    /// Serves what waits on the current client's queue, without blocking.
    private func serveWaitingEvents() {
        while true {
            let client = sends.withLock { $0.client }
            switch serveEvent(of: client, waitingUpTo: 0) {
            case .none:
                return
            case .served:
                continue
            case .brokersLost:
                if client.hasDelivered.load(ordering: .relaxed) {
                    replace(client)
                }
            case .failedFatally:
                replace(client)
            }
        }
    }

    private enum ServedEvent { case none, served, brokersLost, failedFatally }

    /// Serves one event from the client's main queue.
    private func serveEvent(of client: RdKafkaProducerClient, waitingUpTo timeoutMilliseconds: Int32) -> ServedEvent {
        guard let event = rd_kafka_queue_poll(client.handle.events, timeoutMilliseconds) else { return .none }
        defer { rd_kafka_event_destroy(event) }
        switch rd_kafka_event_type(event) {
        case RD_KAFKA_EVENT_DR:
            if completeDeliveries(event) { client.hasDelivered.store(true, ordering: .relaxed) }
        case RD_KAFKA_EVENT_ERROR:
            let code = rd_kafka_event_error(event)
            let reason = rd_kafka_event_error_string(event).map { String(cString: $0) } ?? code.text
            if rd_kafka_event_error_is_fatal(event) != 0 {
                // The client refuses every send from now on (an idempotent producer's sequence
                // out of order, its id fenced): only a new one goes on.
                logger.error("Kafka producer failed fatally; continuing with a new client", metadata: ["kafka.error": "\(reason)"])
                return .failedFatally
            } else {
                // librdkafka has logged the cause already (a connection failure, say); only
                // "every broker is down" is news.
                let level: Logger.Level = code == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN ? .warning : .debug
                logger.log(level: level, "Kafka producer error", metadata: ["kafka.error": "\(reason)"])
                if code == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN { return .brokersLost }
            }
        default:
            break
        }
        return .served
    }

    /// The current librdkafka client (the tests make it fail).
    var currentClient: OpaquePointer { sends.withLock { $0.client.handle.client } }

    /// Swaps in a new librdkafka client after every broker went away, or a fatal error. The broker that
    /// comes back may have lost its topics and producer state (tansu) or re-created them with
    /// new ids: the idempotent producer's id and sequence numbers belong to the cluster that
    /// was lost, and a new client starts over with the new one. Sends in flight on the old
    /// client fail with `.brokerUnavailable`; callers retry them.
    private func replace(_ old: RdKafkaProducerClient) {
        let fresh: RdKafkaProducerClient
        do {
            fresh = try Self.makeClient(properties: properties, context: context, wakeups: wakeups, generation: old.generation + 1)
        } catch {
            logger.error("Kafka producer could not replace its client", metadata: ["kafka.error": "\(error)"])
            return
        }
        let abandoned = sends.withLock { state -> [@Sendable (Result<KafkaDeliveryReport, any Error>) -> Void] in
            guard state.client === old else { return [] }
            state.client = fresh
            let gone = state.waiting.filter { $0.value.generation == old.generation }
            for id in gone.keys { state.waiting.removeValue(forKey: id) }
            return gone.values.map(\.complete)
        }
        rd_kafka_purge(old.handle.client, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT | RD_KAFKA_PURGE_F_NON_BLOCKING)
        logger.warning("Kafka brokers lost: the producer starts over with a new client", metadata: ["kafka.abandoned": "\(abandoned.count)"])
        for complete in abandoned {
            complete(.failure(KafkaError.brokerUnavailable))
        }
        // The old client is destroyed when its last in-flight send lets go of it.
    }

    /// Resumes the sends whose delivery reports are in `event`; `true` if one succeeded.
    private func completeDeliveries(_ event: OpaquePointer) -> Bool {
        var results: [(id: UInt, result: Result<KafkaDeliveryReport, any Error>)] = []
        while let message = rd_kafka_event_message_next(event)?.pointee {
            let id = UInt(bitPattern: message._private)
            if message.err == RD_KAFKA_RESP_ERR_NO_ERROR {
                let topic = String(cString: rd_kafka_topic_name(message.rkt))
                results.append((id, .success(KafkaDeliveryReport(topic: topic, partition: message.partition, offset: message.offset))))
            } else {
                results.append((id, .failure(KafkaError(delivery: message.err))))
            }
        }
        let ready = sends.withLock { state in
            results.compactMap { id, result in state.waiting.removeValue(forKey: id).map { ($0.complete, result) } }
        }
        for (complete, result) in ready {
            complete(result)
        }
        return results.contains { if case .success = $0.result { true } else { false } }
    }

    /// No new sends; records in flight get up to `shutdownFlushTimeout`, then whatever is
    /// left fails with `.closed`.
    private func shutDown() async {
        let client = sends.withLock { state in
            state.isClosed = true
            return state.client
        }
        let handle = client.handle
        let timeout = shutdownFlushTimeout
        await runBlocking {
            // With delivery reports as events, rd_kafka_flush would wait for this queue to be
            // served by someone else: serve it here until everything is acknowledged.
            let deadline = ContinuousClock.now + timeout
            while rd_kafka_outq_len(handle.client) > 0, ContinuousClock.now < deadline {
                _ = self.serveEvent(of: client, waitingUpTo: 50)
            }
            rd_kafka_purge(handle.client, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT)
            while self.serveEvent(of: client, waitingUpTo: 100) != .none {}
        }
        let abandoned = sends.withLock { state in
            defer { state.waiting.removeAll() }
            return state.waiting.values.map(\.complete)
        }
        for complete in abandoned {
            complete(.failure(KafkaError.closed))
        }
        logger.debug("Kafka producer shut down", metadata: ["kafka.abandoned": "\(abandoned.count)"])
    }
}

/// The producer's C handles. librdkafka allows calls on them from any thread; only
/// `RdKafkaProducerClient.deinit` destroys them, when nothing else holds the client.
struct RdKafkaProducerHandle: @unchecked Sendable {
    let client: OpaquePointer
    /// The main queue, where delivery reports and errors arrive.
    let events: OpaquePointer
}

/// One librdkafka producer instance; a `KafkaProducer` replaces it after losing every broker.
final class RdKafkaProducerClient: Sendable {
    let handle: RdKafkaProducerHandle
    let generation: Int
    /// A delivery succeeded: the client knows the cluster's topics (and their ids).
    let hasDelivered = Atomic(false)
    // Kept alive until after rd_kafka_destroy: its callbacks use them.
    private let context: RdKafkaCallbackContext
    private let wakeups: QueueWakeups

    init(handle: RdKafkaProducerHandle, context: RdKafkaCallbackContext, wakeups: QueueWakeups, generation: Int) {
        self.handle = handle
        self.context = context
        self.wakeups = wakeups
        self.generation = generation
    }

    deinit {
        rd_kafka_queue_cb_event_enable(handle.events, nil, nil)
        rd_kafka_queue_destroy(handle.events)
        // Quick once flushed or purged.
        rd_kafka_destroy(handle.client)
    }
}

/// The current client and the sends waiting for their delivery report, by the id passed
/// as the message opaque.
struct ProducerState {
    struct Waiting {
        let generation: Int
        let complete: @Sendable (Result<KafkaDeliveryReport, any Error>) -> Void
    }

    var client: RdKafkaProducerClient
    var nextID: UInt = 1
    var waiting: [UInt: Waiting] = [:]
    var isRunning = false
    var isClosed = false

    mutating func register(_ complete: @escaping @Sendable (Result<KafkaDeliveryReport, any Error>) -> Void) -> (UInt, RdKafkaProducerClient)? {
        guard !isClosed else { return nil }
        defer { nextID += 1 }
        waiting[nextID] = Waiting(generation: client.generation, complete: complete)
        return (nextID, client)
    }

    mutating func startRunning() -> Bool {
        defer { isRunning = true }
        return !isRunning
    }
}

/// The outcomes of one batch of sends, filled in by delivery reports in any order.
final class DeliveryOutcomes: Sendable {
    private struct State {
        var results: [Result<KafkaDeliveryReport, any Error>?]
        var remaining: Int
        var waiter: CheckedContinuation<[Result<KafkaDeliveryReport, any Error>], Never>?
    }

    private let state: Mutex<State>

    init(count: Int) {
        state = Mutex(State(results: Array(repeating: nil, count: count), remaining: count))
    }

    func set(_ index: Int, _ result: Result<KafkaDeliveryReport, any Error>) {
        let finished = state.withLock { state -> (CheckedContinuation<[Result<KafkaDeliveryReport, any Error>], Never>, [Result<KafkaDeliveryReport, any Error>])? in
            guard state.results[index] == nil else { return nil }
            state.results[index] = result
            state.remaining -= 1
            guard state.remaining == 0, let waiter = state.waiter else { return nil }
            state.waiter = nil
            return (waiter, state.results.compactMap { $0 })
        }
        if let (waiter, results) = finished { waiter.resume(returning: results) }
    }

    /// Fails every outcome not in yet (a delivery report arriving later is ignored).
    func failRemaining(with error: any Error) {
        let count = state.withLock { $0.results.count }
        for index in 0..<count { set(index, .failure(error)) }
    }

    /// Waits until every outcome is in.
    func all() async -> [Result<KafkaDeliveryReport, any Error>] {
        await withCheckedContinuation { continuation in
            let results = state.withLock { state -> [Result<KafkaDeliveryReport, any Error>]? in
                guard state.remaining > 0 else { return state.results.compactMap { $0 } }
                state.waiter = continuation
                return nil
            }
            if let results { continuation.resume(returning: results) }
        }
    }
}

extension rd_kafka_vu_t {
    init(_ type: rd_kafka_vtype_t, _ set: (inout __Unnamed_union_u) -> Void) {
        self.init()
        vtype = type
        set(&u)
    }
}
