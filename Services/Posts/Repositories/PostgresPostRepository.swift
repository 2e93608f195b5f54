import Foundation
import PostlyEvents
import PostlyModels
import PostlyPostgres
import PostlyService

/// `PostRepository` on the service's PostgreSQL database.
public struct PostgresPostRepository: PostRepository {
    let database: Database
    let feedTotal = FeedTotalCache()

    public init(database: Database) {
        self.database = database
    }

    /// A post's columns with its author's name and picture from the users projection (the
    /// token's name until a user event arrived). `FROM posts p LEFT JOIN users u`.
    static let columns = """
        p.id, p.title, p.content, p.content_html, p.excerpt, p.slug, p.status, p.cover_image, p.author_id,
        COALESCE(u.name, p.author_name) AS author_name, u.profile_picture AS author_picture, p.read_time,
        p.views, p.likes, p.comments_count, p.created_at, p.updated_at, p.published_at, p.version, p.event_sequence
        """
    static let from = "FROM posts p LEFT JOIN users u ON u.user_id = p.author_id"

    // MARK: - Reads

    public func post(id: String, viewer: String?) async throws -> Post {
        try await database.withConnection { connection in
            let rows = try await connection.query(
                "SELECT \(unescaped: Self.columns) \(unescaped: Self.from) WHERE p.id = \(id)")
            return try await visiblePost(rows.first, viewer: viewer, in: connection)
        }
    }

    public func post(slug: String, viewer: String?) async throws -> Post {
        try await database.withConnection { connection in
            let rows = try await connection.query(
                """
                SELECT \(unescaped: Self.columns) \(unescaped: Self.from)
                WHERE p.id = (SELECT post_id FROM slugs WHERE slug = \(slug))
                """)
            return try await visiblePost(rows.first, viewer: viewer, in: connection)
        }
    }

    private func visiblePost(_ row: Row?, viewer: String?, in connection: DatabaseConnection) async throws -> Post {
        guard let row else { throw APIError.notFound("Post not found") }
        let record = try PostRecord(row)
        // A draft does not exist for anyone but its author.
        guard record.status == .published || record.authorId == viewer else { throw APIError.notFound("Post not found") }
        return try await Self.posts([record], in: connection)[0]
    }

    public func list(_ filter: PostFilter, page: PageRequest) async throws -> PostPage {
        let isFeed = filter == PostFilter(status: .published, authorId: nil)
        let cachedTotal = isFeed ? feedTotal.total : nil
        let countedAt = ContinuousClock.now
        return try await database.withConnection { connection in
            let status = filter.status?.rawValue
            let rows: [Row]
            var total: Int
            if let cachedTotal {
                rows = try await connection.query(
                    """
                    SELECT \(unescaped: Self.columns) \(unescaped: Self.from)
                    WHERE p.status = 'published'
                    ORDER BY p.published_at DESC, p.created_at DESC, p.id DESC
                    LIMIT \(page.limit) OFFSET \(page.offset)
                    """)
                total = cachedTotal
            } else {
                // One round trip: the page through the feed index, and the total beside it (a
                // window count would make PostgreSQL read every matching row before the LIMIT).
                rows = try await connection.query(
                    """
                    WITH page AS (
                        SELECT \(unescaped: Self.columns) \(unescaped: Self.from)
                        WHERE (\(status)::text IS NULL OR p.status = \(status)) AND (\(filter.authorId)::text IS NULL OR p.author_id = \(filter.authorId))
                        ORDER BY p.published_at DESC, p.created_at DESC, p.id DESC
                        LIMIT \(page.limit) OFFSET \(page.offset)
                    )
                    SELECT page.*, (
                        SELECT count(*) FROM posts p
                        WHERE (\(status)::text IS NULL OR p.status = \(status)) AND (\(filter.authorId)::text IS NULL OR p.author_id = \(filter.authorId))
                    ) AS total
                    FROM page ORDER BY page.published_at DESC, page.created_at DESC, page.id DESC
                    """)
                total = try rows.first?.decode("total", as: Int.self) ?? 0
                if rows.isEmpty, page.offset > 0 {
                    // Past the last page: no row carried the total.
                    total = try await connection.query(
                        """
                        SELECT count(*) AS total FROM posts p
                        WHERE (\(status)::text IS NULL OR p.status = \(status)) AND (\(filter.authorId)::text IS NULL OR p.author_id = \(filter.authorId))
                        """
                    ).first?.decode("total", as: Int.self) ?? 0
                }
                if isFeed { feedTotal.store(total, countedAt: countedAt) }
            }
            let posts = try await Self.posts(rows.map(PostRecord.init), in: connection)
            return PostPage(posts: posts, pagination: Pagination(total: total, page: page.page, limit: page.limit))
        }
    }

    public func isLiked(id: String, by caller: Caller) async throws -> Bool {
        try await database.withConnection { connection in
            let rows = try await connection.query(
                """
                SELECT p.status, p.author_id, EXISTS (SELECT 1 FROM likes WHERE post_id = p.id AND user_id = \(caller.userId)) AS liked
                FROM posts p WHERE p.id = \(id)
                """)
            guard let row = rows.first, try row.decode("status", as: String.self) == PostStatus.published.rawValue
                    || row.decode("author_id", as: String.self) == caller.userId
            else { throw APIError.notFound("Post not found") }
            return try row.decode("liked", as: Bool.self)
        }
    }

    /// Posts with their comments, oldest first: one batched query for all posts that have any.
    static func posts(_ records: [PostRecord], in connection: DatabaseConnection) async throws -> [Post] {
        let withComments = records.filter { $0.commentsCount > 0 }.map(\.id)
        var comments: [String: [Comment]] = [:]
        if !withComments.isEmpty {
            let rows = try await connection.query(
                """
                SELECT c.id, c.post_id, c.content, c.author_id, COALESCE(u.name, c.author_name) AS author_name,
                       CASE WHEN u.user_id IS NULL THEN c.author_picture ELSE u.profile_picture END AS author_picture, c.created_at
                FROM comments c LEFT JOIN users u ON u.user_id = c.author_id
                WHERE c.post_id = ANY(\(withComments))
                ORDER BY c.created_at, c.id
                """)
            for row in rows {
                let comment = Comment(
                    id: try row.decode("id"), postId: try row.decode("post_id"), content: try row.decode("content"),
                    author: Author(userId: try row.decode("author_id"), name: try row.decode("author_name"),
                                   profilePicture: try row.decode("author_picture")),
                    createdAt: try row.decode("created_at"))
                comments[comment.postId, default: []].append(comment)
            }
        }
        return records.map { $0.post(comments: comments[$0.id] ?? []) }
    }

    private func lockedRecord(id: String, in connection: DatabaseConnection) async throws -> PostRecord? {
        try await connection.query(
            "SELECT \(unescaped: Self.columns) \(unescaped: Self.from) WHERE p.id = \(id) FOR UPDATE OF p"
        ).first.map(PostRecord.init)
    }

    private func record(id: String, in connection: DatabaseConnection) async throws -> PostRecord {
        guard let record = try await connection.query(
            "SELECT \(unescaped: Self.columns) \(unescaped: Self.from) WHERE p.id = \(id)"
        ).first.map(PostRecord.init) else { throw APIError.notFound("Post not found") }
        return record
    }

    // MARK: - Writes

    public func create(_ new: NewPost, by caller: Caller, idempotencyKey: String?) async throws -> (post: Post, replayed: Bool) {
        let id = UUID().uuidString.lowercased()
        let request = String(decoding: try Self.requestEncoder.encode(new), as: UTF8.self)
        let created: (post: Post, replayed: Bool) = try await database.transaction { connection in
            if let idempotencyKey {
                try await connection.execute(
                    """
                    DELETE FROM idempotency_keys
                    WHERE user_id = \(caller.userId) AND key = \(idempotencyKey) AND created_at < now() - interval '24 hours'
                    """)
                // A concurrent retry with the same key waits here for the first to commit.
                let claimed = try await connection.query(
                    """
                    INSERT INTO idempotency_keys (user_id, key, request, post_id)
                    VALUES (\(caller.userId), \(idempotencyKey), \(request), \(id))
                    ON CONFLICT DO NOTHING RETURNING post_id
                    """)
                if claimed.isEmpty {
                    guard let first = try await connection.query(
                        "SELECT request, post_id FROM idempotency_keys WHERE user_id = \(caller.userId) AND key = \(idempotencyKey)"
                    ).first else { throw DatabaseError.serializationFailure }
                    guard try first.decode("request", as: String.self) == request else {
                        throw APIError.invalidFields(["Idempotency-Key": "was already used with a different request"])
                    }
                    let record = try await record(id: try first.decode("post_id"), in: connection)
                    return (try await Self.posts([record], in: connection)[0], true)
                }
            }
            let rendering = PostRendering(markdown: new.content)
            let slug = try await claimSlug(Slug.make(from: new.title), fallback: id, for: id, in: connection)
            let now = Date()
            try await connection.execute(
                """
                INSERT INTO posts (id, title, content, content_html, excerpt, slug, status, cover_image, author_id, author_name,
                                   read_time, created_at, updated_at, published_at)
                VALUES (\(id), \(new.title), \(new.content), \(rendering.html), \(rendering.excerpt), \(slug), \(new.status.rawValue),
                        \(new.coverImage), \(caller.userId), \(caller.name), \(rendering.readTime), \(now), \(now),
                        \(new.status == .published ? now : nil))
                """)
            let record = try await record(id: id, in: connection)
            try await Outbox.add(record.event(.postCreated(record.snapshot()), actorId: caller.userId), in: connection)
            return (record.post(comments: []), false)
        }
        feedTotal.invalidate()
        return created
    }

    public func update(id: String, _ changes: PostChanges, by caller: Caller, ifMatch: Int?) async throws -> UpdateOutcome {
        defer { feedTotal.invalidate() }
        return try await database.transaction { connection in
            let current = try await authorizedRecord(id: id, caller: caller, in: connection)
            if let ifMatch, ifMatch != current.version {
                return .stale(try await Self.posts([current], in: connection)[0])
            }
            let title = changes.title ?? current.title
            let content = changes.content ?? current.content
            let status = changes.status ?? current.status
            let coverImage = changes.coverImage ?? current.coverImage
            guard title != current.title || content != current.content || status != current.status || coverImage != current.coverImage else {
                return .updated(try await Self.posts([current], in: connection)[0])
            }
            let rendering = content == current.content
                ? PostRendering(html: current.contentHtml, excerpt: current.excerpt, readTime: current.readTime)
                : PostRendering(markdown: content)
            var slug = current.slug
            if title != current.title {
                slug = try await claimSlug(Slug.make(from: title), fallback: id, for: id, in: connection)
            }
            let now = Date()
            let publishedAt: Date? = switch (current.status, status) {
            case (.draft, .published): now
            case (_, .draft): nil
            default: current.publishedAt
            }
            try await connection.execute(
                """
                UPDATE posts SET title = \(title), content = \(content), content_html = \(rendering.html), excerpt = \(rendering.excerpt),
                    read_time = \(rendering.readTime), slug = \(slug), status = \(status.rawValue), cover_image = \(coverImage),
                    published_at = \(publishedAt), updated_at = \(now), version = version + 1, event_sequence = event_sequence + 1
                WHERE id = \(id)
                """)
            let record = try await record(id: id, in: connection)
            try await Outbox.add(record.event(.postUpdated(record.snapshot()), actorId: caller.userId), in: connection)
            return .updated(try await Self.posts([record], in: connection)[0])
        }
    }

    public func delete(id: String, by caller: Caller) async throws {
        defer { feedTotal.invalidate() }
        try await database.transaction { connection in
            var record = try await authorizedRecord(id: id, caller: caller, in: connection)
            try await connection.execute("DELETE FROM posts WHERE id = \(id)")
            try await connection.execute("DELETE FROM comments WHERE post_id = \(id)")
            record.eventSequence += 1
            try await Outbox.add(record.event(.postDeleted(record.snapshot(deletedAt: Date())), actorId: caller.userId), in: connection)
        }
    }

    /// The post locked for a write by its author: 404 when it does not exist or is another's
    /// draft, 403 when it is another's published post.
    private func authorizedRecord(id: String, caller: Caller, in connection: DatabaseConnection) async throws -> PostRecord {
        guard let record = try await lockedRecord(id: id, in: connection),
              record.status == .published || record.authorId == caller.userId
        else { throw APIError.notFound("Post not found") }
        guard record.authorId == caller.userId else { throw APIError.forbidden("Only the author can change this post") }
        return record
    }

    /// Claims `base`, then `base-2`, `base-3`, ... in the slugs table until one is free or
    /// already this post's own. The primary key decides: two posts never get one slug.
    private func claimSlug(_ base: String, fallback: String, for postId: String, in connection: DatabaseConnection) async throws -> String {
        let base = base.isEmpty ? Slug.make(from: fallback).isEmpty ? "post" : Slug.make(from: fallback) : base
        var attempt = 1
        while true {
            let candidate = Slug.candidate(base, attempt: attempt)
            // Waits for a concurrent claim of the same slug to commit or roll back.
            let claimed = try await connection.query(
                "INSERT INTO slugs (slug, post_id) VALUES (\(candidate), \(postId)) ON CONFLICT DO NOTHING RETURNING slug")
            if !claimed.isEmpty { return candidate }
            let owner = try await connection.query("SELECT post_id FROM slugs WHERE slug = \(candidate)").first
            if try owner?.decode("post_id", as: String.self) == postId { return candidate }
            attempt += 1
        }
    }

    // MARK: - Likes and views

    public func like(id: String, by caller: Caller) async throws {
        try await changeLike(id: id, by: caller, liked: true)
    }

    public func unlike(id: String, by caller: Caller) async throws {
        try await changeLike(id: id, by: caller, liked: false)
    }

    /// One row per (post, user); the count moves in the same transaction, only when the row did.
    /// No explicit row lock: the like's foreign key takes a key-share lock on the post, which
    /// the count's `UPDATE` does not conflict with, so concurrent likes queue without deadlocks.
    private func changeLike(id: String, by caller: Caller, liked: Bool) async throws {
        do {
            try await changeLikeOnce(id: id, by: caller, liked: liked)
        } catch DatabaseError.server(let sqlState, _) where sqlState == "23503" {
            // The post was deleted between the look and the like.
            throw APIError.notFound("Post not found")
        }
    }

    private func changeLikeOnce(id: String, by caller: Caller, liked: Bool) async throws {
        try await database.transaction { connection in
            guard let post = try await connection.query("SELECT status, author_id FROM posts WHERE id = \(id)").first,
                  try post.decode("status", as: String.self) == PostStatus.published.rawValue
                    || post.decode("author_id", as: String.self) == caller.userId
            else { throw APIError.notFound("Post not found") }
            let changed = liked
                ? try await connection.execute(
                    "INSERT INTO likes (post_id, user_id) VALUES (\(id), \(caller.userId)) ON CONFLICT DO NOTHING")
                : try await connection.execute("DELETE FROM likes WHERE post_id = \(id) AND user_id = \(caller.userId)")
            guard changed > 0 else { return }
            let delta = liked ? 1 : -1
            guard let row = try await connection.query(
                """
                UPDATE posts SET likes = likes + \(delta), event_sequence = event_sequence + 1 WHERE id = \(id)
                RETURNING likes, event_sequence, title, author_id
                """
            ).first else { throw APIError.notFound("Post not found") }
            let user = try await connection.query("SELECT name, profile_picture FROM users WHERE user_id = \(caller.userId)").first
            let liker = Author(
                userId: caller.userId, name: try user?.decode("name", as: String.self) ?? caller.name,
                profilePicture: try user?.decode("profile_picture", as: String?.self) ?? nil)
            let like = PostLike(
                postId: id, postTitle: try row.decode("title"), postAuthorId: try row.decode("author_id"), liker: liker,
                likes: try row.decode("likes"))
            let event = Event(
                producer: "posts", key: id, sequence: try row.decode("event_sequence", as: Int64.self), actorId: caller.userId,
                data: liked ? .postLiked(like) : .postUnliked(like))
            try await Outbox.add(event, in: connection)
        }
    }

    public func addViews(_ views: [String: Int]) async throws {
        guard !views.isEmpty else { return }
        let ids = Array(views.keys)
        let counts = ids.map { views[$0]! }
        try await database.execute(
            """
            UPDATE posts SET views = posts.views + v.count
            FROM unnest(\(ids)::text[], \(counts)::bigint[]) AS v(id, count) WHERE posts.id = v.id
            """)
    }

    // MARK: - Operations

    public func republishAll() async throws -> Int {
        var republished = 0
        var after = ""
        while true {
            // Batches in id order, each its own transaction, so a large table never holds one long lock.
            let count = try await database.transaction { connection in
                let rows = try await connection.query(
                    """
                    UPDATE posts SET event_sequence = event_sequence + 1
                    WHERE id IN (SELECT id FROM posts WHERE id > \(after) ORDER BY id LIMIT 200)
                    RETURNING id
                    """)
                let ids = try rows.map { try $0.decode("id", as: String.self) }.sorted()
                guard !ids.isEmpty else { return (0, after) }
                let records = try await connection.query(
                    "SELECT \(unescaped: Self.columns) \(unescaped: Self.from) WHERE p.id = ANY(\(ids)) ORDER BY p.id"
                ).map(PostRecord.init)
                for record in records {
                    try await Outbox.add(record.event(.postUpdated(record.snapshot()), actorId: nil), in: connection)
                }
                return (records.count, ids.last!)
            }
            guard count.0 > 0 else { return republished }
            republished += count.0
            after = count.1
        }
    }

    private static let requestEncoder = PostlyJSON.encoder()
}
