import ServiceLifecycle

/// Waits `duration`, or less when graceful shutdown or cancellation begins: the one way a
/// long-running loop pauses. Never throws; the caller looks at `Task.isShuttingDownGracefully`.
public func sleepUnlessShuttingDown(for duration: Duration) async {
    try? await cancelWhenGracefulShutdown { try await Task.sleep(for: duration) }
}
