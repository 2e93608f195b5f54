import PostlyModels
import PostlyPostgres
import Synchronization

/// The posts service's read model in memory: posts with their comments and authors, the
/// pages of lists (their ids and totals) and the rendered feeds, each kept until a change
/// drops it, never by age.
///
/// - This instance's commits signal what they changed (`channel`, a `PostChange` line), and
///   the model drops it before the write answers, so the writer's next read is never stale.
/// - Other instances' changes arrive through `ReadModelSync`, which also sends this
///   instance's changes to them (`outgoing`).
/// - Views never drop a post: the totals the view counter writes are merged into the cached
///   posts (`viewsWritten`), here and in other instances.
final class ReadModel: Sendable {
    /// The commit signal of a change; the payload is a `PostChange` line.
    static let channel = "postly_posts_changed"

    /// Which posts a page lists, and how many the whole list holds.
    struct PageKey: Hashable, Sendable {
        var filter: PostFilter
        var page: PageRequest
    }

    struct PageIDs: Sendable {
        var ids: [String]
        var total: Int
    }

    let posts: ReadCache<String, Post>
    let pages: ReadCache<PageKey, PageIDs>
    /// Slugs' post ids: checked when used, never dropped by a change (`PostgresPostRepository.post(slug:viewer:)`).
    let slugs: ReadCache<String, String>
    let feeds = FeedCache()
    /// Changes this instance made that other instances have not been told of yet.
    let outgoing = ChangeQueue()

    /// - Parameter capacityBytes: about how much the cached posts may hold (their text).
    init(database: Database, capacityBytes: Int) {
        posts = ReadCache(capacityBytes: capacityBytes, cost: { Self.estimatedBytes(of: $1) }, tags: { [$0] })
        // A page's author id is held twice, in its key and its tag: anyone can ask for the
        // (empty) pages of ids of 8 KiB.
        pages = ReadCache(
            capacityBytes: max(1 << 20, capacityBytes / 16), cost: { key, page in 64 + 48 * page.ids.count + 2 * (key.filter.authorId?.utf8.count ?? 0) },
            tags: Self.tags(of:))
        slugs = ReadCache(capacityBytes: max(1 << 20, capacityBytes / 32), cost: { 96 + $0.utf8.count + $1.utf8.count }, tags: { [$0] })
        // For the database's lifetime, like the model's.
        _ = database.onCommit(signalling: Self.channel) { [self] line in
            guard let change = PostChange(line: Substring(line)) else { return }
            apply(change)
            outgoing.append(change)
        }
    }

    /// Makes the model current with a change, made here or told by another instance.
    func apply(_ change: PostChange) {
        switch change {
        case .post(let id):
            posts.drop(tags: [id])
        case .counts(let id):
            posts.drop(tags: [id])
            return  // a feed shows neither likes nor comments
        case .lists(let authorId, let status):
            pages.drop(tags: ["author \(authorId)", "status \(status.rawValue)", "status any"])
        case .views(let id, let total):
            posts.update(id) { $0.views = max($0.views, total) }
            return  // a feed shows no views
        case .everything:
            posts.dropAll()
            pages.dropAll()
        }
        // After the posts and pages: a feed rendered from now on reads them as changed.
        feeds.dropAll()
    }

    /// The view counter wrote views: the posts' totals in the database.
    func viewsWritten(_ totals: [String: Int]) {
        for (id, total) in totals {
            let change = PostChange.views(id: id, total: total)
            apply(change)
            outgoing.append(change)
        }
    }

    /// A list page's scope: one author's lists, or every author's lists of a status.
    static func tags(of key: PageKey) -> [String] {
        if let authorId = key.filter.authorId { return ["author \(authorId)"] }
        return ["status \(key.filter.status?.rawValue ?? "any")"]
    }

    /// Every string a post holds, each with its allocation, plus the rest of each object (its
    /// text alone left a post of a 2 KB cover URL and a word at a fifth of what it holds).
    static func estimatedBytes(of post: Post) -> Int {
        func bytes(_ strings: String?...) -> Int { strings.reduce(0) { $0 + 32 + ($1?.utf8.count ?? 0) } }
        func bytes(_ author: Author) -> Int { bytes(author.userId, author.name, author.profilePicture) }
        let own = 256 + bytes(post.id, post.title, post.content, post.contentHtml, post.excerpt, post.slug, post.coverImage) + bytes(post.author)
        return post.comments.reduce(own) { $0 + 128 + bytes($1.id, $1.postId, $1.content) + bytes($1.author) }
    }
}

/// Changes waiting to be told to other instances, in order. Bounded: past `limit` they
/// collapse into `.everything`, which says as much.
final class ChangeQueue: Sendable {
    private let state = Mutex<(changes: [PostChange], doorbell: AsyncStream<Void>.Continuation?)>(([], nil))
    private let limit: Int

    init(limit: Int = 10_000) {
        self.limit = limit
    }

    func append(_ change: PostChange) {
        let doorbell = state.withLock { state in
            if state.changes.count >= limit { state.changes = [.everything] }
            if state.changes != [.everything] { state.changes.append(change) }
            return state.doorbell
        }
        doorbell?.yield()
    }

    /// Puts changes that could not be sent back in front.
    func putBack(_ changes: [PostChange]) {
        state.withLock { state in
            state.changes = changes + state.changes
            if state.changes.count > limit { state.changes = [.everything] }
        }
    }

    func takeAll() -> [PostChange] {
        state.withLock { state in
            defer { state.changes = [] }
            return state.changes
        }
    }

    /// Rings once for every batch of appends (and once at the start, for what came before).
    func doorbell() -> AsyncStream<Void> {
        let (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        state.withLock { $0.doorbell = continuation }
        continuation.yield()
        return stream
    }
}
