import Synchronization

/// The number of published posts, kept for a moment: counting every matching row on each
/// feed page is what limits the feed. This process's own writes drop it when they commit
/// (`channel`), so the writer's next page counts its change, as `PostCache` does; another
/// instance's show within `lifetime`.
final class FeedTotalCache: Sendable {
    /// The commit signal of a write that may change the number of published posts.
    static let channel = "postly_feed_total_changed"

    private struct Entry {
        var total: Int
        var at: ContinuousClock.Instant
    }
    private struct State {
        var entry: Entry?
        var invalidatedAt: ContinuousClock.Instant?
    }
    private let state = Mutex(State())
    private let lifetime: Duration

    init(lifetime: Duration = .seconds(1)) {
        self.lifetime = lifetime
    }

    var total: Int? {
        state.withLock { state in
            guard let current = state.entry, current.at.duration(to: .now) < lifetime else { return nil }
            return current.total
        }
    }

    func store(_ total: Int, countedAt: ContinuousClock.Instant) {
        state.withLock { state in
            // A count started before the last write committed may have missed it.
            if let invalidatedAt = state.invalidatedAt, countedAt <= invalidatedAt { return }
            if let current = state.entry, current.at > countedAt { return }
            state.entry = Entry(total: total, at: countedAt)
        }
    }

    func invalidate() {
        state.withLock { state in
            state.entry = nil
            state.invalidatedAt = .now
        }
    }
}
