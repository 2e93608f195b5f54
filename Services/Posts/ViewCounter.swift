import Logging
import PostlyEvents
import ServiceLifecycle
import Synchronization

/// Counts post views in memory and writes them in batches, so a read never waits on a
/// write. Flushes every `interval` and once more at graceful shutdown; a batch that fails
/// to write is put back and tried again.
public final class ViewCounter: Service, Sendable {
    private let pending = Mutex<[String: Int]>([:])
    private let repository: any PostRepository
    private let interval: Duration
    private let logger: Logger

    public init(repository: any PostRepository, interval: Duration, logger: Logger) {
        self.repository = repository
        self.interval = interval
        self.logger = logger
    }

    /// Counts one view; returns the views of the post not yet written, this one included.
    @discardableResult
    public func record(_ postId: String) -> Int {
        pending.withLock { pending in
            let count = pending[postId, default: 0] + 1
            pending[postId] = count
            return count
        }
    }

    /// The views of the post not yet written.
    public func unwritten(_ postId: String) -> Int {
        pending.withLock { $0[postId, default: 0] }
    }

    public func run() async throws {
        while !Task.isShuttingDownGracefully, !Task.isCancelled {
            // Graceful shutdown ends the wait at once; the last flush below still runs.
            await sleepUnlessShuttingDown(for: interval)
            await flush()
        }
        await flush()
    }

    public func flush() async {
        let batch = pending.withLock { pending in
            defer { pending = [:] }
            return pending
        }
        guard !batch.isEmpty else { return }
        do {
            try await repository.addViews(batch)
        } catch {
            logger.warning("cannot write views; keeping them for the next flush", metadata: ["error": "\(error)"])
            pending.withLock { pending in
                for (id, count) in batch { pending[id, default: 0] += count }
            }
        }
    }
}
