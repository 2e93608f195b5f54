import PostlyService
import Synchronization

/// The contents of the posts searches answered lately, as `"content":...` fields ready to copy,
/// by post and version. The index does not keep them (they are about half of what a post takes,
/// 5 KB of a post of 600 words); a search reads the ones missing here from its database, one
/// statement for its page. Bounded by bytes; the least recently searched go first.
final class ContentCache: Sendable {
    struct Key: Hashable, Sendable {
        var postId: String
        var version: Int
    }

    private let contents: Mutex<LeastRecentlyUsed<Key, [UInt8]>>

    init(bytes: Int) {
        contents = Mutex(LeastRecentlyUsed(maxBytes: bytes))
    }

    /// The content's field, if it is here.
    func content(of key: Key) -> [UInt8]? {
        contents.withLock { $0.value(of: key) }
    }

    func insert(_ content: [UInt8], for key: Key) {
        let evicted = contents.withLock { $0.insert(content, bytes: content.count, for: key) }
        _ = evicted  // freed here, outside the lock
    }

    /// The contents' bytes it holds.
    var size: Int { contents.withLock { $0.bytes } }
}
