import Foundation
import PostlyEvents
import PostlyMarkdown
import PostlyModels
import PostlyPostgres

/// `PostRepository` on the service's PostgreSQL database, read through the read model in
/// memory (`ReadModel`): a post or a list page is read from the database once, then answered
/// from memory until a change drops it.
public struct PostgresPostRepository: PostRepository {
    let database: Database
    let model: ReadModel

    /// - Parameter model: the read model; by default one of its own of 32 MiB.
    init(database: Database, model: ReadModel? = nil) {
        self.database = database
        self.model = model ?? ReadModel(database: database, capacityBytes: 32 << 20)
    }

    public init(database: Database) {
        self.init(database: database, model: nil)
    }

    /// A post's columns with its author's name and picture from the users projection (the
    /// token's name until a user event arrived). `FROM posts p LEFT JOIN users u`.
    static let columns = """
        p.id, p.title, p.content, p.content_html, p.excerpt, p.slug, p.status, p.cover_image, p.author_id,
        COALESCE(u.name, p.author_name) AS author_name, u.profile_picture AS author_picture, p.read_time,
        p.views, p.likes, p.created_at, p.updated_at, p.published_at, p.version, p.publish_at
        """
    static let from = "FROM posts p LEFT JOIN users u ON u.user_id = p.author_id"

    // MARK: - Reads

    public func post(id: String, viewer: String?) async throws -> Post {
        guard let post = try await posts(ids: [id]).first, post.isVisible(to: viewer) else { throw PostError.notFound }
        return post
    }

    /// The post's id from memory (`ReadModel.slugs`): a slug, current or former, names one
    /// post until that post is deleted, when another may take it. So a kept id is looked up
    /// again only when its post is not found.
    public func post(slug: String, viewer: String?) async throws -> Post {
        guard let id = try await postId(ofSlug: slug) else { throw PostError.notFound }
        do {
            return try await post(id: id, viewer: viewer)
        } catch PostError.notFound {
            model.slugs.drop(tags: [slug])
            guard let now = try await postId(ofSlug: slug), now != id else { throw PostError.notFound }
            return try await post(id: now, viewer: viewer)
        }
    }

    private func postId(ofSlug slug: String) async throws -> String? {
        try await model.slugs.values([slug]) { slugs in
            try await database.query("SELECT slug, post_id FROM slugs WHERE slug = ANY(\(slugs))")
                .reduce(into: [:]) { ids, row in ids[try row.decode("slug", as: String.self)] = try row.decode("post_id", as: String.self) }
        }[slug]
    }

    public func list(_ filter: PostFilter, page: PageRequest) async throws -> PostPage {
        let key = ReadModel.PageKey(filter: filter, page: page)
        let listed = try await model.pages.values([key]) { _ in
            try await database.withConnection { connection in
                // A page past the end is empty without asking: its OFFSET read the whole list.
                let total = try await PostTotals.total(of: filter, in: connection)
                let ids = page.offset < total ? try await Self.ids(filter, page: page, in: connection) : []
                return [key: ReadModel.PageIDs(ids: ids, total: total)]
            }
        }[key] ?? ReadModel.PageIDs(ids: [], total: 0)
        // A post read afresh under a page kept from before it changed may have left the list
        // (a draft now): the page is dropped when its change arrives, the post at once.
        let posts = try await posts(ids: listed.ids).filter { post in
            (filter.status.map { $0 == post.status } ?? true) && (filter.authorId.map { $0 == post.author.userId } ?? true)
        }
        return PostPage(posts: posts, pagination: Pagination(total: listed.total, page: page.page, limit: page.limit))
    }

    /// A page's ids, newest first, each filter by the index made for it.
    private static func ids(_ filter: PostFilter, page: PageRequest, in connection: DatabaseConnection) async throws -> [String] {
        let rows = switch (filter.authorId, filter.status) {
        case (nil, let status?):
            try await connection.query(
                """
                SELECT id FROM posts WHERE status = \(status.rawValue)
                ORDER BY published_at DESC, created_at DESC, id DESC LIMIT \(page.limit) OFFSET \(page.offset)
                """)
        case (let authorId?, let status?):
            try await connection.query(
                """
                SELECT id FROM posts WHERE author_id = \(authorId) AND status = \(status.rawValue)
                ORDER BY published_at DESC, created_at DESC, id DESC LIMIT \(page.limit) OFFSET \(page.offset)
                """)
        case (let authorId?, nil):
            // Drafts among them: by creation (a draft has no publication to order by).
            try await connection.query(
                """
                SELECT id FROM posts WHERE author_id = \(authorId)
                ORDER BY created_at DESC, id DESC LIMIT \(page.limit) OFFSET \(page.offset)
                """)
        case (nil, nil):
            try await connection.query(
                "SELECT id FROM posts ORDER BY published_at DESC, created_at DESC, id DESC LIMIT \(page.limit) OFFSET \(page.offset)")
        }
        return try rows.map { try $0.decode("id") }
    }

    /// The posts with these ids, in this order, from the read model where it has them and else
    /// in one batched read, which it keeps. Ids that name no post are left out.
    private func posts(ids: [String]) async throws -> [Post] {
        let found = try await model.posts.values(ids) { missing in
            try await database.withConnection { connection in
                let rows = try await connection.query(
                    "SELECT \(unescaped: Self.columns) \(unescaped: Self.from) WHERE p.id = ANY(\(missing))")
                return Dictionary(uniqueKeysWithValues: try await Self.posts(rows.map(PostRecord.init), in: connection).map { ($0.id, $0) })
            }
        }
        return ids.compactMap { found[$0] }
    }

    public func isLiked(id: String, by caller: Caller) async throws -> Bool {
        try await database.withConnection { connection in
            guard let record = try await record(id: id, in: connection), record.isVisible(to: caller.userId) else {
                throw PostError.notFound
            }
            return try await !connection.query(
                "SELECT 1 AS liked FROM likes WHERE post_id = \(id) AND user_id = \(caller.userId)"
            ).isEmpty
        }
    }

    /// Posts with their comments, oldest first: one batched query for the whole list.
    static func posts(_ records: [PostRecord], in connection: DatabaseConnection) async throws -> [Post] {
        guard !records.isEmpty else { return [] }
        var comments: [String: [Comment]] = [:]
        let rows = try await connection.query(
            """
            SELECT c.id, c.post_id, c.content, c.author_id, COALESCE(u.name, c.author_name) AS author_name,
                   CASE WHEN u.user_id IS NULL THEN c.author_picture ELSE u.profile_picture END AS author_picture, c.created_at
            FROM comments c LEFT JOIN users u ON u.user_id = c.author_id
            WHERE c.post_id = ANY(\(records.map(\.id)))
            ORDER BY c.created_at, c.id
            """)
        for row in rows {
            let comment = try Comment(row: row)
            comments[comment.postId, default: []].append(comment)
        }
        return records.map { $0.post(comments: comments[$0.id] ?? []) }
    }

    /// One post with its comments.
    static func post(_ record: PostRecord, in connection: DatabaseConnection) async throws -> Post {
        try await posts([record], in: connection).first ?? record.post(comments: [])
    }

    private func record(id: String, in connection: DatabaseConnection, locking lock: RowLock? = nil) async throws -> PostRecord? {
        try await connection.query(
            "SELECT \(unescaped: Self.columns) \(unescaped: Self.from) WHERE p.id = \(id) \(unescaped: lock?.rawValue ?? "")"
        ).first.map(PostRecord.init)
    }

    /// Every write locks the post's row first, then what hangs off it (slugs, likes, comments),
    /// then the post's event sequence: one order, so two writes of a post never deadlock.
    private enum RowLock: String {
        /// Deletes and edits of the post itself.
        case forUpdate = "FOR UPDATE OF p"
        /// Likes: they change a counter, not the key, so the likes' foreign keys can still check it.
        case forNoKeyUpdate = "FOR NO KEY UPDATE OF p"
    }

    // MARK: - Writes

    public func create(_ new: NewPost, by caller: Caller, in transaction: WriteTransaction) async throws -> Post {
        let connection = transaction.connection
        let schedule = try PublishSchedule.resolve(current: nil, requested: new.status, publishAt: new.publishAt, now: transaction.now)
        let id = UUID.timeOrderedString()
        let rendering = new.rendering
        let slug = try await claimSlug(Slug.make(from: new.title), fallback: id, for: id, in: connection)
        let now = Date()
        // The new row comes back with its author's name in the same round trip.
        guard let record = try await connection.query(
            """
            WITH p AS (
                INSERT INTO posts (id, title, content, content_html, rendered_by, excerpt, slug, status, cover_image, author_id,
                                   author_name, read_time, created_at, updated_at, published_at, publish_at)
                VALUES (\(id), \(new.title), \(new.content), \(rendering.html), \(Markdown.renderer), \(rendering.excerpt), \(slug),
                        \(schedule.status.rawValue), \(new.coverImage), \(caller.userId), \(caller.name), \(rendering.readTime), \(now), \(now),
                        \(schedule.status == .published ? now : nil), \(schedule.publishAt))
                RETURNING *
            )
            SELECT \(unescaped: Self.columns) FROM p LEFT JOIN users u ON u.user_id = p.author_id
            """
        ).first.map(PostRecord.init) else { throw PostError.notFound }
        try await ChangeLog.post(id, authorId: caller.userId, status: schedule.status, in: connection)
        try await transaction.emit(.postCreated(record.snapshot(contentText: rendering.text)), key: id, actorId: caller.userId)
        try await PostTotals.move(authorId: caller.userId, from: nil, to: schedule.status, in: connection)
        connection.signal(PostChange.written(id: id, authorId: caller.userId, statusBefore: nil, statusAfter: schedule.status))
        return record.post(comments: [])
    }

    public func update(
        id: String, _ changes: PostChanges, by caller: Caller, ifMatch: [Int]?, in transaction: WriteTransaction
    ) async throws -> UpdateOutcome {
        let connection = transaction.connection
        let current = try await authorizedRecord(id: id, caller: caller, in: connection)
        if let ifMatch, !ifMatch.contains(current.version) {
            return .stale(try await Self.post(current, in: connection))
        }
        let schedule = try PublishSchedule.resolve(
            current: PublishSchedule(status: current.status, publishAt: current.publishAt), requested: changes.status,
            publishAt: changes.publishAt, now: transaction.now)
        let title = changes.title ?? current.title
        let content = changes.content ?? current.content
        let status = schedule.status
        let coverImage = changes.coverImage ?? current.coverImage
        guard title != current.title || content != current.content || status != current.status || coverImage != current.coverImage
            || schedule.publishAt != current.publishAt
        else {
            return .updated(try await Self.post(current, in: connection))
        }
        let rendering = content == current.content
            ? PostRendering(html: current.contentHtml, excerpt: current.excerpt, readTime: current.readTime)
            : PostRendering(markdown: content)
        var slug = current.slug
        // A new title of the same slug ("Hello" to "Hello!") keeps the post's address, suffixed
        // or not; one of another ("WWDC 2026" to "WWDC") claims its own.
        if Slug.make(from: title) != Slug.make(from: current.title) {
            slug = try await claimSlug(Slug.make(from: title), fallback: id, for: id, in: connection)
        }
        let now = Date()
        let publishedAt: Date? = switch (current.status, status) {
        case (.published, .published): current.publishedAt
        case (_, .published): now
        case (_, .draft), (_, .scheduled): nil
        }
        guard let record = try await connection.query(
            """
            WITH p AS (
                UPDATE posts SET title = \(title), content = \(content), content_html = \(rendering.html), excerpt = \(rendering.excerpt),
                    rendered_by = CASE WHEN posts.content = \(content) THEN posts.rendered_by ELSE \(Markdown.renderer) END,
                    read_time = \(rendering.readTime), slug = \(slug), status = \(status.rawValue), cover_image = \(coverImage),
                    published_at = \(publishedAt), publish_at = \(schedule.publishAt), updated_at = \(now), version = version + 1
                WHERE id = \(id)
                RETURNING *
            )
            SELECT \(unescaped: Self.columns) FROM p LEFT JOIN users u ON u.user_id = p.author_id
            """
        ).first.map(PostRecord.init) else { throw PostError.notFound }
        try await ChangeLog.post(id, authorId: current.authorId, status: status, in: connection)
        try await transaction.emit(.postUpdated(record.snapshot(contentText: rendering.text)), key: id, actorId: caller.userId)
        let post = try await Self.post(record, in: connection)
        try await PostTotals.move(authorId: current.authorId, from: current.status, to: status, in: connection)
        connection.signal(PostChange.written(
            id: id, authorId: current.authorId, statusBefore: current.status, statusAfter: status,
            rescheduled: schedule.publishAt != current.publishAt))
        return .updated(post)
    }

    public func delete(id: String, by caller: Caller, in transaction: WriteTransaction) async throws {
        let connection = transaction.connection
        let record = try await authorizedRecord(id: id, caller: caller, in: connection)
        // Slugs and likes go by cascade; the comments projection has no foreign key (its
        // events may arrive before the post's), so its rows go here.
        try await connection.execute("DELETE FROM posts WHERE id = \(id)")
        try await connection.execute("DELETE FROM comments WHERE post_id = \(id)")
        try await ChangeLog.post(id, authorId: record.authorId, status: nil, in: connection)
        try await transaction.emit(.postDeleted(record.snapshot(deletedAt: Date())), key: id, actorId: caller.userId)
        try await PostTotals.move(authorId: record.authorId, from: record.status, to: nil, in: connection)
        connection.signal(PostChange.written(id: id, authorId: record.authorId, statusBefore: record.status, statusAfter: nil))
    }

    /// The post locked for a write by its author: `notFound` when it does not exist or is
    /// another's draft, `notAuthor` when it is another's published post.
    private func authorizedRecord(id: String, caller: Caller, in connection: DatabaseConnection) async throws -> PostRecord {
        guard let record = try await record(id: id, in: connection, locking: .forUpdate), record.isVisible(to: caller.userId) else {
            throw PostError.notFound
        }
        guard record.authorId == caller.userId else { throw PostError.notAuthor }
        return record
    }

    /// Claims `base` in the slugs table, else keeps a slug of that base the post has already
    /// (`base` itself first), else claims `base-N` with N from the base's counter
    /// (`slug_suffixes`; the 5,001st "Test" tried 10,000 statements before it). The primary key
    /// decides: two posts never get one slug.
    private static let slugSuffixes = SuffixCounter(table: "slug_suffixes")

    func claimSlug(_ base: String, fallback: String, for postId: String, in connection: DatabaseConnection) async throws -> String {
        let base = base.isEmpty ? Slug.make(from: fallback).isEmpty ? "post" : Slug.make(from: fallback) : base
        var candidate = base
        // Waits for a concurrent claim of the same slug to commit or roll back.
        while try await connection.query(
            "INSERT INTO slugs (slug, post_id) VALUES (\(candidate), \(postId)) ON CONFLICT DO NOTHING RETURNING slug"
        ).isEmpty {
            if candidate == base {
                let own = try await connection.query("SELECT slug FROM slugs WHERE post_id = \(postId)").map { try $0.decode("slug", as: String.self) }
                if let kept = own.contains(base) ? base : own.sorted().first(where: { Slug.isCandidate($0, of: base) }) { return kept }
            }
            candidate = Slug.candidate(base, attempt: try await Self.slugSuffixes.next(of: base, in: connection))
        }
        return candidate
    }

    // MARK: - Likes and views

    /// One row per (post, user); the count moves in the same transaction, only when the row did.
    public func setLiked(_ liked: Bool, id: String, by caller: Caller, in transaction: WriteTransaction) async throws {
        let connection = transaction.connection
        guard let post = try await record(id: id, in: connection, locking: .forNoKeyUpdate), post.isVisible(to: caller.userId) else {
            throw PostError.notFound
        }
        let changed = liked
            ? try await connection.execute(
                "INSERT INTO likes (post_id, user_id) VALUES (\(id), \(caller.userId)) ON CONFLICT DO NOTHING")
            : try await connection.execute("DELETE FROM likes WHERE post_id = \(id) AND user_id = \(caller.userId)")
        guard changed > 0 else { return }
        let delta = liked ? 1 : -1
        guard let likes = try await connection.query(
            "UPDATE posts SET likes = likes + \(delta) WHERE id = \(id) RETURNING likes"
        ).first?.decode("likes", as: Int.self) else { throw PostError.notFound }
        let user = try await connection.query("SELECT name, profile_picture FROM users WHERE user_id = \(caller.userId)").first
        let liker = Author(
            userId: caller.userId, name: try user?.decode("name", as: String.self) ?? caller.name,
            profilePicture: try user?.decode("profile_picture", as: String?.self) ?? nil)
        let like = PostLike(postId: id, postTitle: post.title, postAuthorId: post.authorId, liker: liker, likes: likes)
        try await transaction.emit(liked ? .postLiked(like) : .postUnliked(like), key: id, actorId: caller.userId)
        connection.signal([.counts(id: id)])
    }

    /// Merges the new totals into the read model instead of dropping the posts: a view never
    /// costs a read.
    public func addViews(_ views: [String: Int]) async throws {
        guard !views.isEmpty else { return }
        // In id order, so that two instances' flushes of the same posts lock them in the same
        // order and never deadlock; in a transaction, so that a lost connection means nothing
        // was written and the flush may run again (the last one, at shutdown, has no next).
        let ids = views.keys.sorted()
        let counts = ids.map { views[$0, default: 0] }
        let written = try await database.retryingTransaction { connection in
            let rows = try await connection.query(
                """
                UPDATE posts SET views = posts.views + v.count
                FROM unnest(\(ids)::text[], \(counts)::bigint[]) AS v(id, count) WHERE posts.id = v.id
                RETURNING posts.id, posts.views, pg_current_xact_id()::text AS transaction_id
                """)
            let written = try rows.map { (id: try $0.decode("id", as: String.self), views: try $0.decode("views", as: Int.self)) }
            // A COMMIT whose answer is lost is settled, not written again (the views twice). The
            // evidence is a post whose total is at least ours: views only grow, so short of it
            // ours is not in (any of the batch's posts, as one may be deleted meanwhile).
            if let first = rows.first {
                connection.noteTransactionId(
                    try first.decode("transaction_id"),
                    evidence: """
                        SELECT EXISTS (
                            SELECT 1 FROM unnest(\(written.map(\.id))::text[], \(written.map(\.views))::bigint[]) AS v(id, views)
                            JOIN posts USING (id) WHERE posts.views >= v.views
                        )::text AS present
                        """)
            }
            return written
        }
        model.viewsWritten(Dictionary(uniqueKeysWithValues: written.map { ($0.id, $0.views) }))
    }

    // MARK: - Scheduled publishing

    /// The claim is the change: the rows are locked, skipped when another holds them, and
    /// published in one statement, whose transaction also carries their events (the write unit).
    /// A publish thus happens, and is announced, once, however many instances run this.
    public func publishDue(limit: Int, in transaction: WriteTransaction) async throws -> [Post] {
        let connection = transaction.connection
        let records = try await connection.query(
            """
            WITH due AS (
                SELECT id FROM posts WHERE status = 'scheduled' AND publish_at <= \(transaction.now)
                ORDER BY publish_at, id LIMIT \(limit) FOR UPDATE SKIP LOCKED
            ), p AS (
                UPDATE posts SET status = 'published', published_at = posts.publish_at, publish_at = NULL,
                    updated_at = \(transaction.now), version = posts.version + 1
                FROM due WHERE posts.id = due.id
                RETURNING posts.*
            )
            SELECT \(unescaped: Self.columns) FROM p LEFT JOIN users u ON u.user_id = p.author_id
            """
        ).map(PostRecord.init)
        guard !records.isEmpty else { return [] }
        try await ChangeLog.posts(records.map { ($0.id, $0.authorId, .published) }, in: connection)
        try await transaction.emit(records.map { (.postUpdated($0.snapshot()), $0.id) }, actorId: nil)
        try await PostTotals.move(records.map { PostTotals.Move(authorId: $0.authorId, before: .scheduled, after: .published) }, in: connection)
        for record in records {
            connection.signal(PostChange.written(id: record.id, authorId: record.authorId, statusBefore: .scheduled, statusAfter: .published))
        }
        return records.map { $0.post(comments: []) }
    }

    public func nextDue() async throws -> Date? {
        try await database.query("SELECT min(publish_at) AS next FROM posts WHERE status = 'scheduled'").first?.decode("next")
    }

    // MARK: - Feeds

    /// A feed's posts and its `Last-Modified`, read from one snapshot of the database, not
    /// from the read model: a model that had not yet heard of another instance's change gave
    /// the old posts under a date that counted the change, and a reader sending only
    /// `If-Modified-Since` kept them. Rendered on a miss only (`FeedCache`); no comments.
    public func feed(authorId: String?, epoch: Date) async throws -> FeedContent {
        // Before the feed's snapshot: a write it cannot see is stamped at or after this (its
        // transaction was running now, or begins later; a second spares the few microseconds
        // between a transaction's start and its report). Only clients write: autovacuum's
        // long runs would hold it back.
        let settled = try await database.retryingTransaction { connection in
            try await connection.query(
                """
                SELECT least(clock_timestamp() - interval '1 second', min(xact_start)) AS settled
                FROM pg_stat_activity
                WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid()
                """
            ).first?.decode("settled", as: Date.self) ?? .distantPast
        }
        return try await database.retryingTransaction(isolation: .repeatableRead) { connection in
            // In the API's order, from the one place that writes it.
            let ids = try await Self.ids(PostFilter(status: .published, authorId: authorId), page: PageRequest(page: 1, limit: FeedContent.size), in: connection)
            let found = try await connection.query("SELECT \(unescaped: Self.columns) \(unescaped: Self.from) WHERE p.id = ANY(\(ids))")
                .map { try PostRecord($0).post(comments: []) }
            let byId = Dictionary(uniqueKeysWithValues: found.map { ($0.id, $0) })
            let posts = ids.compactMap { byId[$0] }
            var author = posts.first?.author
            if let authorId, author == nil {
                let known = try await connection.query(
                    """
                    SELECT user_id, name, profile_picture FROM users WHERE user_id = \(authorId)
                    UNION ALL SELECT author_id, author_name, NULL FROM posts WHERE author_id = \(authorId)
                    LIMIT 1
                    """
                ).first
                guard let known else { throw PostError.authorNotFound }
                author = Author(userId: try known.decode("user_id"), name: try known.decode("name"), profilePicture: try known.decode("profile_picture"))
            }
            // Besides its posts' updates: when they were written here (an imported post keeps its
            // old update time), its authors' new names (an author's feed shows its author's even
            // without a post), and posts that left it (the change feed's log knows all three).
            // Each is one index entry, however long the log.
            let authorIds = Set(posts.map(\.author.userId)).union([authorId].compactMap { $0 })
            let shown: SQL = """
                SELECT max(changed_at) AS changed FROM changes
                WHERE (kind = 'post' AND id = ANY(\(posts.map(\.id))))
                   OR (kind = 'author' AND id = ANY(\(Array(authorIds))))
                """
            let left: SQL =
                if let authorId {
                    "SELECT max(changed_at) AS changed FROM changes WHERE kind = 'post' AND ever_public AND visibility <> 'public' AND author_id = \(authorId)"
                } else {
                    "SELECT max(changed_at) AS changed FROM changes WHERE kind = 'post' AND ever_public AND visibility <> 'public'"
                }
            var changed = posts.map(\.updatedAt)
            for query in [shown, left] {
                if let time = try await connection.query(query).first?.decode("changed", as: Date?.self) { changed.append(time) }
            }
            let lastModified = changed.max() ?? epoch
            return FeedContent(
                author: authorId == nil ? nil : author, posts: posts, lastModified: lastModified,
                isSettled: lastModified.timeIntervalSince1970.rounded(.down) < settled.timeIntervalSince1970.rounded(.down))
        }
    }

    // MARK: - Operations

    public func republish(after: String, limit: Int, in transaction: WriteTransaction) async throws -> [String] {
        let records = try await transaction.connection.query(
            "SELECT \(unescaped: Self.columns) \(unescaped: Self.from) WHERE p.id > \(after) ORDER BY p.id LIMIT \(limit) FOR UPDATE OF p"
        ).map(PostRecord.init)
        for record in records {
            try await transaction.emit(.postUpdated(record.snapshot()), key: record.id, actorId: nil)
        }
        return records.map(\.id)
    }
}

extension DatabaseConnection {
    /// Drops what `changes` made stale from this instance's read model once the transaction
    /// commits, and tells the other instances (`ReadModel`).
    func signal(_ changes: [PostChange]) {
        for change in changes { signalAfterCommit(ReadModel.channel, payload: change.line) }
    }
}
