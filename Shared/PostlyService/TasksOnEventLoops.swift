import Logging
import NIOCore
import NIOPosix

/// Runs Swift's tasks on NIO's event loops, the threads that already serve the connections,
/// instead of on a cooperative pool of their own. On two cores the two pools' threads took turns
/// on the cores, and each request hopped from an event loop to the pool and back. Search, A B at
/// 10,000 posts, 32 connections: one word 1,529-1,783 -> 1,711-1,914 answers a second, p50
/// 21-25 -> 16-18 ms; the posts service's reads, no difference beyond the noise. Nothing may
/// block a task, as before: libpq, librdkafka, libcurl and bcrypt run on threads of their own.
///
/// Called first in a service's `main`, on the main thread, before any task exists.
public func runTasksOnEventLoops() {
    if !NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor() {
        // Still correct, only slower; said before the service's logging is set up, so on stderr.
        Logger(label: "postly").warning("Swift's tasks stay on their own pool: NIO could not take them over")
    }
}
