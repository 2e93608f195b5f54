import Foundation
import PostlyEvents
import PostlyMarkdown
import PostlyModels
import PostlyPostgres

/// The import of an earlier deployment's posts and likes (`postly-import`): insert-only by id,
/// through the same totals, change-feed log, read-model signals and events as a post created now.
extension PostgresPostRepository {
    public func importPost(_ post: ImportedPost, in transaction: WriteTransaction) async throws -> ImportResult {
        let connection = transaction.connection
        // Once in the ledger, always existing: a post deleted since stays deleted.
        let isNew = try await connection.query("INSERT INTO imported_posts (id) VALUES (\(post.id)) ON CONFLICT DO NOTHING RETURNING id")
        guard !isNew.isEmpty else { return .existing }
        let rendering = PostRendering(markdown: post.content)
        // The earlier slug stays current (links in the wild); `-2`... only when a post here holds it.
        let slug = try await claimSlug(post.slug, fallback: post.id, for: post.id, in: connection)
        let publishedAt = post.status == .published ? post.publishedAt ?? post.createdAt : nil
        guard let record = try await connection.query(
            """
            WITH p AS (
                INSERT INTO posts (id, title, content, content_html, rendered_by, excerpt, slug, status, cover_image, author_id,
                                   author_name, read_time, views, created_at, updated_at, published_at)
                VALUES (\(post.id), \(post.title), \(post.content), \(rendering.html), \(Markdown.renderer), \(rendering.excerpt), \(slug),
                        \(post.status.rawValue), \(post.coverImage), \(post.author.userId), \(post.author.name), \(rendering.readTime),
                        \(post.views), \(post.createdAt), \(post.updatedAt), \(publishedAt))
                ON CONFLICT (id) DO NOTHING
                RETURNING *
            )
            SELECT \(unescaped: Self.columns) FROM p LEFT JOIN users u ON u.user_id = p.author_id
            """
        ).first.map(PostRecord.init) else { return .existing }
        try await ChangeLog.post(post.id, authorId: post.author.userId, status: post.status, in: connection)
        try await transaction.emit(
            .postCreated(record.snapshot(contentText: rendering.text)), key: post.id, actorId: post.author.userId, imported: true)
        try await PostTotals.move(authorId: post.author.userId, from: nil, to: post.status, in: connection)
        connection.signal(PostChange.written(id: post.id, authorId: post.author.userId, statusBefore: nil, statusAfter: post.status))
        return .created
    }

    public func importAliases(_ aliases: [AuthorAlias], in transaction: WriteTransaction) async throws {
        guard !aliases.isEmpty else { return }
        try await transaction.connection.execute(
            """
            INSERT INTO author_aliases (from_id, to_id)
            SELECT from_id, to_id FROM unnest(\(aliases.map(\.from))::text[], \(aliases.map(\.to))::text[]) AS a(from_id, to_id)
            WHERE from_id <> to_id
            ON CONFLICT (from_id) DO NOTHING
            """)
    }

    public func importLikes(_ likes: [ImportedLike], in transaction: WriteTransaction) async throws -> ImportOutcome {
        let connection = transaction.connection
        var outcome = ImportOutcome()
        guard !likes.isEmpty else { return outcome }
        let postIds = Array(Set(likes.map(\.postId))).sorted()
        // Locked first, as a like here locks its post: the recount then counts a like that
        // committed meanwhile (it counted from before it, and the counter stayed one off).
        let known = Set(
            try await connection.query("SELECT id FROM posts WHERE id = ANY(\(postIds)) ORDER BY id FOR NO KEY UPDATE")
                .map { try $0.decode("id", as: String.self) })
        for like in likes where !known.contains(like.postId) { outcome.reject(like.id, "unknown post") }
        let stored = likes.filter { known.contains($0.postId) }
        let created = try await connection.query(
            """
            WITH l AS (
                SELECT DISTINCT ON (post_id, user_id) post_id, user_id, created_at
                FROM unnest(\(stored.map(\.postId))::text[], \(stored.map(\.userId))::text[],
                            \(stored.map { Timestamp.format($0.createdAt) })::timestamptz[]) AS l(post_id, user_id, created_at)
                ORDER BY post_id, user_id, created_at
            ), ledger AS (
                -- Once in the ledger, always existing: a like taken back since stays taken back.
                INSERT INTO imported_likes (post_id, user_id) SELECT post_id, user_id FROM l
                ON CONFLICT DO NOTHING RETURNING post_id, user_id
            ), inserted AS (
                INSERT INTO likes (post_id, user_id, created_at) SELECT post_id, user_id, created_at FROM l JOIN ledger USING (post_id, user_id)
                ON CONFLICT DO NOTHING RETURNING 1
            )
            SELECT count(*)::bigint AS created FROM inserted
            """
        ).first?.decode("created", as: Int.self) ?? 0
        outcome.created = created
        outcome.existing = stored.count - created
        // The counter follows the rows, whatever the earlier deployment's counter said.
        let recounted = try await connection.query(
            """
            UPDATE posts SET likes = c.likes
            FROM (SELECT post_id, count(*)::int AS likes FROM likes WHERE post_id = ANY(\(postIds)) GROUP BY post_id) AS c
            WHERE posts.id = c.post_id AND posts.likes <> c.likes
            RETURNING posts.id
            """
        ).map { try $0.decode("id", as: String.self) }
        connection.signal(recounted.map(PostChange.counts(id:)))
        // Search shows a post's likes from its events, and its import said 0: each recounted
        // post travels again, as an update.
        if !recounted.isEmpty {
            let records = try await connection.query(
                "SELECT \(unescaped: Self.columns) \(unescaped: Self.from) WHERE p.id = ANY(\(recounted)) ORDER BY p.id"
            ).map(PostRecord.init)
            try await transaction.emit(records.map { (.postUpdated($0.snapshot()), $0.id) }, actorId: nil, imported: true)
        }
        return outcome
    }

    public func aliasTarget(of userId: String) async throws -> String? {
        try await database.query("SELECT to_id FROM author_aliases WHERE from_id = \(userId)").first?.decode("to_id")
    }
}
