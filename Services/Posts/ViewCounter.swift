import Logging
import PostlyEvents
import ServiceLifecycle
import Synchronization

/// Counts post views in memory and writes them in batches, so a read never waits on a
/// write. Flushes every `interval` and once more at graceful shutdown; a batch that fails
/// to write is put back and tried again.
public final class ViewCounter: Service, Sendable {
    private struct Counts {
        var pending: [String: Int] = [:]
        /// The batch a flush is writing: still unwritten until the read model has its totals
        /// (a post read meanwhile lost the batch's views for as long as the write took). A post
        /// read from the database between the commit and then counts the batch twice, for that
        /// moment.
        var writing: [String: Int] = [:]

        func unwritten(_ postId: String) -> Int { pending[postId, default: 0] + writing[postId, default: 0] }
    }

    private let counts = Mutex(Counts())
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
        counts.withLock { counts in
            counts.pending[postId, default: 0] += 1
            return counts.unwritten(postId)
        }
    }

    /// The views of the post not yet written.
    public func unwritten(_ postId: String) -> Int {
        counts.withLock { $0.unwritten(postId) }
    }

    public func run() async throws {
        while !Task.isShuttingDownGracefully, !Task.isCancelled {
            // Graceful shutdown ends the wait at once; the last flush below still runs.
            await sleepUnlessShuttingDown(for: interval)
            await flush()
        }
        await flush()
    }

    /// Writes the views counted so far. One at a time (the run loop's).
    public func flush() async {
        let batch = counts.withLock { counts in
            counts.writing = counts.pending
            counts.pending = [:]
            return counts.writing
        }
        guard !batch.isEmpty else { return }
        do {
            try await repository.addViews(batch)
            counts.withLock { $0.writing = [:] }
        } catch {
            logger.warning("cannot write views; keeping them for the next flush", metadata: ["error": "\(error)"])
            counts.withLock { counts in
                for (id, count) in batch { counts.pending[id, default: 0] += count }
                counts.writing = [:]
            }
        }
    }
}
