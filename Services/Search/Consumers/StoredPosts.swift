import PostlyModels
import Synchronization

/// The posts this instance's consumer has just stored, as it stored them, by the change-log
/// position each was given: the follower applies them from here instead of reading back what
/// its own instance wrote (the read-back was a third of the machine while a backlog was
/// indexed). Only what the tables would give back exactly is kept: a post split in Swift and
/// without comments (their order and their authors are the tables'). Whatever is not here the
/// follower reads, so an entry missing is always safe.
final class StoredPosts: Sendable {
    /// A post as a statement stored it.
    enum Stored: Sendable {
        /// Published: found, and shown as this.
        case published(Published)
        /// A draft, scheduled or unpublished: not found.
        case hidden
    }

    struct Published: Sendable {
        var post: Post
        var likes: Int
        /// Microseconds since 1970, as the table gives them.
        var publishedAt: Int64?
        var title: TextSplit
        var content: TextSplit
    }

    /// The change log's table (`IndexRows.Snapshot.generation`) and a position in it.
    struct Key: Hashable, Sendable {
        var generation: Int64
        var position: Int64
    }

    /// Entries kept at most, and about the bytes they may hold (a follower that cannot read
    /// for a while, or is loading the index while the consumer works through a backlog): further
    /// ones are read back instead. Counted alone, 10,000 long posts with their splits held
    /// half a gigabyte.
    static let limit = 10_000
    static let limitBytes = 32 << 20

    private struct Entries {
        var stored: [Key: (entry: Stored, bytes: Int)] = [:]
        var bytes = 0
    }

    private let entries = Mutex(Entries())

    /// Keeps `stored`, unless as many wait already as `limit`, or it would take the entries past
    /// `limitBytes`.
    func add(_ stored: [Key: Stored]) {
        let sized = stored.mapValues { (entry: $0, bytes: Self.estimatedBytes(of: $0)) }
        let bytes = sized.values.reduce(0) { $0 + $1.bytes }
        entries.withLock { entries in
            guard entries.stored.count + stored.count <= Self.limit, entries.bytes + bytes <= Self.limitBytes else { return }
            for (key, value) in sized {
                entries.bytes += value.bytes - (entries.stored.updateValue(value, forKey: key)?.bytes ?? 0)
            }
        }
    }

    /// The entries of the change log `generation` after `position`, by position; forgets the
    /// others (applied already, or of a table replaced since).
    func after(_ position: Int64, generation: Int64) -> [Int64: Stored] {
        entries.withLock { entries in
            entries.stored = entries.stored.filter { $0.key.generation == generation && $0.key.position > position }
            entries.bytes = entries.stored.values.reduce(0) { $0 + $1.bytes }
            return Dictionary(uniqueKeysWithValues: entries.stored.map { ($0.key.position, $0.value.entry) })
        }
    }

    /// About the bytes an entry holds: the post's texts, and each piece of their splits.
    static func estimatedBytes(of stored: Stored) -> Int {
        guard case .published(let published) = stored else { return 64 }
        let post = published.post
        let texts = post.title.utf8.count + post.content.utf8.count + (post.contentHtml?.utf8.count ?? 0) + post.excerpt.utf8.count
        let pieces = [published.title, published.content].reduce(0) { $0 + $1.tokens.count + $1.lexemes.count + $1.lexiconWords.count }
        return 512 + 2 * texts + 24 * pieces
    }
}
