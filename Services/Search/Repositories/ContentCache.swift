import Synchronization

/// The contents of the posts searches answered lately, as `"content":...` fields ready to copy,
/// by post and version. The index does not keep them (they are about half of what a post takes,
/// 5 KB of a post of 600 words); a search reads the ones missing here from its database, one
/// statement for its page. Bounded by bytes, in two halves: when the newer half is full it
/// becomes the older one and the older one is dropped; what a search finds in the older half it
/// brings to the newer, so what is searched often stays.
final class ContentCache: Sendable {
    struct Key: Hashable, Sendable {
        var postId: String
        var version: Int
    }

    private struct Halves {
        var newer: [Key: [UInt8]] = [:]
        var older: [Key: [UInt8]] = [:]
        var newerBytes = 0
        let halfBytes: Int

        /// Inserts into the newer half; returns the older half when it had to make room.
        mutating func insert(_ content: [UInt8], for key: Key) -> [Key: [UInt8]] {
            var dropped: [Key: [UInt8]] = [:]
            if newerBytes + content.count > halfBytes, !newer.isEmpty {
                dropped = older
                older = newer
                newer = [:]
                newerBytes = 0
            }
            if let replaced = newer.updateValue(content, forKey: key) { newerBytes -= replaced.count }
            newerBytes += content.count
            return dropped
        }
    }

    private let halves: Mutex<Halves>

    init(bytes: Int) {
        halves = Mutex(Halves(halfBytes: bytes / 2))
    }

    /// The content's field, if it is here.
    func content(of key: Key) -> [UInt8]? {
        let (content, dropped) = halves.withLock { halves -> ([UInt8]?, [Key: [UInt8]]) in
            if let content = halves.newer[key] { return (content, [:]) }
            guard let content = halves.older.removeValue(forKey: key) else { return (nil, [:]) }
            return (content, halves.insert(content, for: key))
        }
        _ = dropped  // freed here, outside the lock
        return content
    }

    func insert(_ content: [UInt8], for key: Key) {
        let dropped = halves.withLock { $0.insert(content, for: key) }
        _ = dropped  // freed here, outside the lock
    }

    /// The contents' bytes it holds.
    var size: Int { halves.withLock { $0.newerBytes + $0.older.values.reduce(0) { $0 + $1.count } } }
}
