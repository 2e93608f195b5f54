import PostlyModels
import Synchronization

/// Posts as last read from the database, with their comments, so that most reads of a post
/// need no round trip: an entry answers while it is younger than `lifetime`.
///
/// Every change this process commits drops its post's entry before the write returns
/// (`PostCache.channel`, signalled at commit by the repository and the projections), so the
/// writer's next read is never stale; a change by another instance shows within `lifetime`.
/// A read that began before a drop does not store what it read. Bounded by an estimate of
/// the bytes held.
final class PostCache: Sendable {
    /// The commit signal of a changed post; the payload is its id, or `allPosts`.
    static let channel = "postly_post_changed"
    /// The payload that drops every entry (an author's name or picture changed).
    static let allPosts = "*"

    private struct Entry {
        var post: Post
        var readAt: ContinuousClock.Instant
        var bytes: Int
    }

    private struct State {
        var entries: [String: Entry] = [:]
        var bytes = 0
        /// When posts were dropped, kept for `lifetime`: reads older than that are not stored.
        var droppedAt: [String: ContinuousClock.Instant] = [:]
        var allDroppedAt: ContinuousClock.Instant?
    }

    private let state = Mutex(State())
    let lifetime: Duration
    let capacityBytes: Int

    init(lifetime: Duration, capacityBytes: Int) {
        self.lifetime = lifetime
        self.capacityBytes = capacityBytes
    }

    /// The post if an entry younger than `lifetime` holds it.
    func post(_ id: String) -> Post? {
        state.withLock { state in
            guard let entry = state.entries[id], entry.readAt.duration(to: .now) < lifetime else { return nil }
            return entry.post
        }
    }

    /// Keeps `post`, read from the database at `readAt`, unless it was dropped since.
    func store(_ post: Post, readAt: ContinuousClock.Instant) {
        let bytes = Self.estimatedBytes(of: post)
        guard lifetime > .zero, bytes <= capacityBytes / 4 else { return }
        state.withLock { state in
            let now = ContinuousClock.now
            guard readAt.duration(to: now) < lifetime,
                  state.allDroppedAt.map({ $0 < readAt }) ?? true,
                  state.droppedAt[post.id].map({ $0 < readAt }) ?? true
            else { return }
            if let old = state.entries.removeValue(forKey: post.id) { state.bytes -= old.bytes }
            if state.bytes + bytes > capacityBytes { Self.makeRoom(for: bytes, in: &state, capacity: capacityBytes, lifetime: lifetime, now: now) }
            state.entries[post.id] = Entry(post: post, readAt: readAt, bytes: bytes)
            state.bytes += bytes
        }
    }

    /// Drops the entry of the post `id`, or every entry for `allPosts`.
    func drop(_ id: String) {
        state.withLock { state in
            let now = ContinuousClock.now
            if id == Self.allPosts {
                state = State(allDroppedAt: now)
                return
            }
            if let old = state.entries.removeValue(forKey: id) { state.bytes -= old.bytes }
            state.droppedAt[id] = now
            if state.droppedAt.count > 10_000 {
                state.droppedAt = state.droppedAt.filter { $0.value.duration(to: now) < lifetime }
            }
        }
    }

    /// Expired entries go first, then others in no particular order.
    private static func makeRoom(for bytes: Int, in state: inout State, capacity: Int, lifetime: Duration, now: ContinuousClock.Instant) {
        for (id, entry) in state.entries where entry.readAt.duration(to: now) >= lifetime {
            state.entries[id] = nil
            state.bytes -= entry.bytes
        }
        while state.bytes + bytes > capacity, let (id, entry) = state.entries.first {
            state.entries[id] = nil
            state.bytes -= entry.bytes
        }
    }

    /// The text a post holds, plus a little for the rest of each object.
    static func estimatedBytes(of post: Post) -> Int {
        post.comments.reduce(512 + post.title.utf8.count + post.content.utf8.count + (post.contentHtml?.utf8.count ?? 0)) {
            $0 + 256 + $1.content.utf8.count
        }
    }
}
