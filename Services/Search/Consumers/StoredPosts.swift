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

    /// Entries kept at most (a follower that cannot read for a while): further ones are read
    /// back instead.
    static let limit = 10_000

    private let entries = Mutex<[Key: Stored]>([:])

    /// Keeps `stored`, unless as many wait already as `limit`.
    func add(_ stored: [Key: Stored]) {
        entries.withLock { entries in
            guard entries.count + stored.count <= Self.limit else { return }
            entries.merge(stored) { _, new in new }
        }
    }

    /// The entries of the change log `generation` after `position`, by position; forgets the
    /// others (applied already, or of a table replaced since).
    func after(_ position: Int64, generation: Int64) -> [Int64: Stored] {
        entries.withLock { entries in
            entries = entries.filter { $0.key.generation == generation && $0.key.position > position }
            return Dictionary(uniqueKeysWithValues: entries.map { ($0.key.position, $0.value) })
        }
    }
}
