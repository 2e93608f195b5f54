import ServiceLifecycle

/// Waits `duration`, or less when graceful shutdown or cancellation begins: how a `Service`'s
/// loop pauses when graceful shutdown must end it. Loops that end only when cancelled use
/// `Task.sleep`, and threads blocked in C (the Kafka consumer's poll, the PostgreSQL
/// listener) sleep their own way. Never throws; the caller looks at `Task.isShuttingDownGracefully`.
public func sleepUnlessShuttingDown(for duration: Duration) async {
    try? await cancelWhenGracefulShutdown { try await Task.sleep(for: duration) }
}
