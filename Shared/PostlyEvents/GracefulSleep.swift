import ServiceLifecycle

/// Waits `duration`, or less when graceful shutdown or cancellation begins: how a `Service`'s
/// loop pauses when graceful shutdown must end it. Loops that end only when cancelled use
/// `Task.sleep`, and threads blocked in C (the Kafka consumer's poll, the PostgreSQL
/// listener) sleep their own way. Never throws; the caller looks at `Task.isShuttingDownGracefully`.
public func sleepUnlessShuttingDown(for duration: Duration) async {
    try? await cancelWhenGracefulShutdown { try await Task.sleep(for: duration) }
}

/// The pause of a loop that tries again after a failure: `first`, doubled after each failure
/// that follows, at most `maximum`, and `first` again after a success (`reset`).
public struct Backoff: Sendable {
    private let first: Duration
    private let maximum: Duration
    /// The next pause.
    public private(set) var current: Duration

    public init(first: Duration = .milliseconds(100), maximum: Duration = .seconds(5)) {
        self.first = first
        self.maximum = maximum
        self.current = first
    }

    /// Waits the current pause (less when graceful shutdown begins) and doubles the next.
    public mutating func pause() async {
        await sleepUnlessShuttingDown(for: current)
        current = min(current * 2, maximum)
    }

    public mutating func reset() {
        current = first
    }
}
