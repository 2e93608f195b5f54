import Foundation
import PostlyModels
import PostlyPostgres

/// Posts as the events told of them, for their `Article` documents and the outboxes.
struct ArticleRepository: Sendable {
    let database: Database

    /// What the object of a post's publication answers.
    enum Lookup: Sendable {
        case published(Post)
        /// Deleted after it was published, or an earlier publication of a post published again:
        /// a tombstone.
        case deleted(at: Date?)
        /// A draft, scheduled, never published and deleted, or unknown: nothing to show.
        case hidden
    }

    /// What the object of `postId`'s `publication` answers (see `FederationURLs.article`).
    func lookup(postId: String, publication: Int64?) async throws -> Lookup {
        guard let row = try await database.query(
            "SELECT status, post, deleted_at, published_at, publication FROM articles WHERE post_id = \(postId)"
        ).first else { return .hidden }
        let current: Int64? = try row.decode("publication")
        guard publication == current else {
            // An earlier publication's object was deleted when the post was unpublished.
            let isEarlier = current.map { (publication ?? 0) < $0 } ?? false
            return isEarlier ? .deleted(at: nil) : .hidden
        }
        switch try row.decode("status", as: String.self) {
        case "published":
            return .published(try Self.post(row))
        case "deleted" where !row.isNull("published_at"):
            return .deleted(at: try row.decode("deleted_at"))
        default:
            return .hidden
        }
    }

    /// A published post with the sequence of its Create and its publication.
    struct Published: Sendable {
        var post: Post
        var createSequence: Int64
        var publication: Int64?
    }

    /// An author's published posts, newest first.
    func outbox(authorId: String, page: Int, limit: Int) async throws -> [Published] {
        try await database.query(
            """
            SELECT post, create_sequence, publication FROM articles WHERE author_id = \(authorId) AND status = 'published'
            ORDER BY published_at DESC, post_id LIMIT \(limit) OFFSET \((page - 1) * limit)
            """
        ).map { Published(post: try Self.post($0), createSequence: try $0.decode("create_sequence"), publication: try $0.decode("publication")) }
    }

    func publishedCount(authorId: String? = nil) async throws -> Int {
        let rows = try await database.query(
            "SELECT count(*) AS n FROM articles WHERE status = 'published' AND (\(authorId)::text IS NULL OR author_id = \(authorId))")
        return try rows.first?.decode("n", as: Int.self) ?? 0
    }

    /// What the events said of a post so far.
    struct State {
        /// It has a row: it was public once, or a tombstone.
        var stored = false
        var deleted = false
        /// The event whose Create federated it; nil when it was never federated, or deleted or
        /// unpublished since.
        var createSequence: Int64?
        /// Its last publication (see `FederationURLs.article`).
        var publication: Int64?
        /// The post as the fediverse was last shown it; nil unless it is public.
        var shown: Post?
    }

    /// What the events said of a post so far, its row locked until the transaction ends.
    static func state(of postId: String, in connection: DatabaseConnection) async throws -> State {
        let rows = try await connection.query(
            "SELECT status, create_sequence, publication, post FROM articles WHERE post_id = \(postId) FOR UPDATE")
        guard let row = rows.first else { return State() }
        return State(
            stored: true, deleted: try row.decode("status", as: String.self) == "deleted", createSequence: try row.decode("create_sequence"),
            publication: try row.decode("publication"), shown: row.isNull("post") ? nil : try post(row))
    }

    /// Stores the post of a `post.*` event, a tombstone when `deletedAt` is set. `createSequence`:
    /// the event whose Create federates it (nil: not federated); `publication`: its last. Only a
    /// public post keeps its document: an unpublished one's is never shown. (A post never public
    /// is not stored.)
    static func store(
        _ post: Post, deletedAt: Date?, createSequence: Int64?, publication: Int64?, in connection: DatabaseConnection
    ) async throws {
        let status = deletedAt != nil ? "deleted" : post.status.rawValue
        let json = status == PostStatus.published.rawValue ? String(decoding: try PostlyJSON.encode(post), as: UTF8.self) : nil
        try await connection.execute(
            """
            INSERT INTO articles (post_id, author_id, status, create_sequence, publication, post, published_at, deleted_at)
            VALUES (
                \(post.id), \(post.author.userId), \(status), \(createSequence), \(publication), \(json)::jsonb, \(post.publishedAt),
                \(deletedAt))
            ON CONFLICT (post_id) DO UPDATE SET
                author_id = EXCLUDED.author_id, status = EXCLUDED.status, create_sequence = EXCLUDED.create_sequence,
                publication = EXCLUDED.publication,
                post = EXCLUDED.post, published_at = coalesce(EXCLUDED.published_at, articles.published_at),
                deleted_at = EXCLUDED.deleted_at
            """)
    }

    static func post(_ row: Row) throws -> Post {
        try PostlyJSON.decoder().decode(Post.self, from: Data(try row.decode("post", as: String.self).utf8))
    }
}
