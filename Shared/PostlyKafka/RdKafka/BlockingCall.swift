import NIOPosix

/// Runs a blocking librdkafka call on NIO's blocking thread pool, never on the
/// cooperative pool. It runs to the end even when the calling task is cancelled: a
/// flush or a commit already asked of librdkafka can't be abandoned halfway.
func runBlocking<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        NIOThreadPool.singleton.submit { _ in continuation.resume(returning: body()) }
    }
}
