import Synchronization

/// The records a `KafkaConsumer` receives, in order per partition, for one reader (a
/// second reader would take records away from the first). It finishes when the consumer
/// closes; records received but not yet read are then dropped, and come again to the
/// group's next consumer because they were not committed.
public struct KafkaConsumerMessages: AsyncSequence, Sendable {
    public typealias Element = KafkaMessage
    let buffer: KafkaMessageBuffer

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(buffer: buffer)
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        let buffer: KafkaMessageBuffer

        /// The next record, or `nil` once the consumer has closed or the reading task is cancelled.
        public mutating func next() async -> KafkaMessage? {
            await buffer.next()
        }

        /// The next record and those already waiting behind it, `limit` at most, in order;
        /// empty once the consumer has closed or the reading task is cancelled.
        public mutating func nextBatch(upTo limit: Int) async -> [KafkaMessage] {
            guard let first = await buffer.next() else { return [] }
            return [first] + buffer.takeWaiting(upTo: limit - 1)
        }
    }
}

/// Hands records from the consumer's poll thread to the reading task. It holds only a few
/// so the poll thread waits for a slow reader instead of filling memory with a backlog.
final class KafkaMessageBuffer: Sendable {
    private struct State {
        var messages: [KafkaMessage] = []
        var reader: CheckedContinuation<KafkaMessage?, Never>?
        var isFinished = false
    }

    let capacity: Int
    private let state = Mutex(State())

    init(capacity: Int) {
        self.capacity = capacity
    }

    var isFull: Bool {
        state.withLock { $0.messages.count >= capacity }
    }

    func append(_ message: KafkaMessage) {
        let reader = state.withLock { state -> CheckedContinuation<KafkaMessage?, Never>? in
            guard !state.isFinished else { return nil }
            if let reader = state.reader {
                state.reader = nil
                return reader
            }
            state.messages.append(message)
            return nil
        }
        reader?.resume(returning: message)
    }

    /// Drops the records of partitions taken away in a rebalance: their new owner reads them.
    func removeAll(of partitions: Set<KafkaTopicPartition>) {
        state.withLock { state in
            state.messages.removeAll { partitions.contains(KafkaTopicPartition(topic: $0.topic, partition: $0.partition)) }
        }
    }

    /// Drops every record not yet read (they were not committed: they come again).
    func removeAll() {
        state.withLock { $0.messages.removeAll() }
    }

    /// Up to `limit` records that are already here, without waiting.
    func takeWaiting(upTo limit: Int) -> [KafkaMessage] {
        guard limit > 0 else { return [] }
        return state.withLock { state in
            let taken = Array(state.messages.prefix(limit))
            state.messages.removeFirst(taken.count)
            return taken
        }
    }

    func finish() {
        let reader = state.withLock { state in
            state.isFinished = true
            state.messages.removeAll()
            defer { state.reader = nil }
            return state.reader
        }
        reader?.resume(returning: nil)
    }

    func next() async -> KafkaMessage? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (reader: CheckedContinuation<KafkaMessage?, Never>) in
                let ready = state.withLock { state -> KafkaMessage?? in
                    if !state.messages.isEmpty { return .some(state.messages.removeFirst()) }
                    // Cancellation is flagged before onCancel runs, so one of the two sees it.
                    if state.isFinished || Task.isCancelled { return .some(nil) }
                    state.reader = reader
                    return .none
                }
                if let ready { reader.resume(returning: ready) }
            }
        } onCancel: {
            let reader = state.withLock { state in
                defer { state.reader = nil }
                return state.reader
            }
            reader?.resume(returning: nil)
        }
    }
}

/// One partition of one topic.
public struct KafkaTopicPartition: Hashable, Sendable {
    public var topic: String
    public var partition: Int32

    public init(topic: String, partition: Int32) {
        self.topic = topic
        self.partition = partition
    }
}
