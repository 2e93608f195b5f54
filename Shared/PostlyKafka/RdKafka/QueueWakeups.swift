import CRdKafka

/// Wakes the task serving a librdkafka queue when an event lands on it while it was
/// empty, so the task can drain it without polling and without blocking.
final class QueueWakeups: Sendable {
    let stream: AsyncStream<Void>
    let continuation: AsyncStream<Void>.Continuation

    init() {
        (stream, continuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    var opaque: UnsafeMutableRawPointer {
        Unmanaged.passUnretained(self).toOpaque()
    }
}

/// Runs on a librdkafka thread holding the queue's lock: only signals, calls nothing of librdkafka.
let queueWakeupCallback: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Void = { _, opaque in
    guard let opaque else { return }
    Unmanaged<QueueWakeups>.fromOpaque(opaque).takeUnretainedValue().continuation.yield()
}
