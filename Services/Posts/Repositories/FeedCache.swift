import PostlyService
import Synchronization

/// Rendered feeds in memory, part of the read model: dropped with every change it takes in
/// that a feed may show (views aside), this instance's or another's, after the posts and
/// pages the feeds are rendered from. Bounded by their bytes (an author's feed of long posts
/// takes megabytes), the least recently read going first.
final class FeedCache: Sendable {
    struct Key: Hashable, Sendable {
        var format: FeedFormat
        var authorId: String?
    }

    private struct State {
        var feeds: LeastRecentlyUsed<Key, RenderedFeed>
        /// Grows with every drop: a feed rendered across one is not kept.
        var generation: UInt64 = 0
    }

    private let state: Mutex<State>
    /// How long a feed rendered before its `Last-Modified` settled is served: then it is
    /// rendered again, with one.
    static let unsettledLife = Duration.seconds(1)

    init(capacityBytes: Int = 32 << 20) {
        state = Mutex(State(feeds: LeastRecentlyUsed(maxBytes: capacityBytes)))
    }

    func dropAll() {
        state.withLock { state in
            state.feeds.removeAll()
            state.generation += 1
        }
    }

    /// The feed of `key`, rendered by `render` when none is kept, or by one reader when the one
    /// kept is unsettled past its life. Two first readers may both render: the feed is the same.
    func feed(_ key: Key, render: () async throws -> RenderedFeed) async throws -> RenderedFeed {
        let (kept, generation) = state.withLock { state -> (RenderedFeed?, UInt64) in
            guard let kept = state.feeds.value(of: key) else { return (nil, state.generation) }
            if kept.lastModified == nil, kept.renderedAt.duration(to: .now) >= Self.unsettledLife {
                // Its life is over: this reader renders it again, the others are served it meanwhile.
                state.feeds.update(key) { $0.renderedAt = .now }
                return (nil, state.generation)
            }
            return (kept, state.generation)
        }
        if let kept { return kept }
        let feed = try await render()
        state.withLock { state in
            guard state.generation == generation else { return }
            state.feeds.insert(feed, bytes: 256 + feed.body.count + (key.authorId?.utf8.count ?? 0), for: key)
        }
        return feed
    }
}
