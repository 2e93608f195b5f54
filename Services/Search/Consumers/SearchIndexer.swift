import Foundation
import Metrics
import PostlyEvents
import PostlyMarkdown
import PostlyModels
import PostlyPostgres

/// Keeps the index from `postly.posts`, `postly.users` and `postly.comments`: a published
/// post is indexed (title weighted above content) and its new words go to the lexicon; a
/// draft or deleted post keeps its row without vectors, so it is never found. The runner has
/// dropped stale and repeated events already; the row guards (`sequence`, tombstones) make a
/// second consumer replaying the topics (a reindex) just as safe.
struct SearchIndexer: EventHandler {
    /// Seconds from an event's commit (`occurredAt`) to its application, for the last one.
    private let lag = Gauge(label: "postly_search_index_lag_seconds")
    /// When the newest applied event was committed (Unix seconds): now minus it is the lag
    /// while nothing new arrives.
    private let newest = Gauge(label: "postly_search_newest_event_timestamp_seconds")

    func apply(_ event: Event, in connection: DatabaseConnection) async throws {
        switch event.data {
        case .postCreated(let post), .postUpdated(let post):
            try await Self.index(post, sequence: event.sequence, in: connection)
        case .postDeleted(let post):
            try await Self.remove(postId: post.id, sequence: event.sequence, in: connection)
        case .postLiked(let like), .postUnliked(let like):
            try await connection.execute(
                "UPDATE documents SET likes = \(like.likes), sequence = \(event.sequence) WHERE id = \(like.postId) AND sequence < \(event.sequence)")
        case .userRegistered(let user), .userUpdated(let user):
            try await AuthorsProjection.apply(user, sequence: event.sequence, in: connection)
        case .commentCreated(let snapshot):
            let comment = snapshot.comment
            try await connection.execute(
                """
                INSERT INTO comments (id, post_id, content, author_id, author_name, author_picture, created_at)
                VALUES (\(comment.id), \(comment.postId), \(comment.content), \(comment.author.userId), \(comment.author.name),
                        \(comment.author.profilePicture), \(comment.createdAt))
                ON CONFLICT (id) DO NOTHING
                """)
        case .commentDeleted(let snapshot):
            let comment = snapshot.comment
            try await connection.execute(
                """
                INSERT INTO comments (id, post_id, content, author_id, author_name, author_picture, created_at, deleted)
                VALUES (\(comment.id), \(comment.postId), '', \(comment.author.userId), '', NULL, \(comment.createdAt), true)
                ON CONFLICT (id) DO UPDATE SET deleted = true, content = ''
                """)
        case .sessionRevoked:
            return
        }
        let occurredAt = event.occurredAt.timeIntervalSince1970
        lag.record(max(0, Date().timeIntervalSince1970 - occurredAt))
        newest.record(occurredAt)
    }

    /// Stores the post as the event shows it, with vectors when it is published.
    static func index(_ post: PostSnapshot, sequence: Int64, in connection: DatabaseConnection) async throws {
        try await AuthorsProjection.applyPostAuthor(post.author, in: connection)
        // The renderer the posts service uses: the same contentHtml, and its plain text is
        // what is searched and highlighted (split into words by the table, `search_tokens`).
        let rendered = Markdown.render(post.content)
        let text = rendered.text
        let title = post.title
        let searchable = post.status == .published
        let stored = try await connection.query(
            """
            INSERT INTO documents (
                id, sequence, status, title, content, content_html, content_text, excerpt, slug, cover_image, author_id,
                read_time, created_at, updated_at, published_at, version, vector, title_vector)
            VALUES (
                \(post.id), \(sequence), \(post.status.rawValue), \(title), \(post.content), \(rendered.html), \(text),
                \(post.excerpt), \(post.slug), \(post.coverImage), \(post.author.userId), \(post.readTime), \(post.createdAt),
                \(post.updatedAt), \(post.publishedAt), \(post.version),
                CASE WHEN \(searchable) THEN setweight(to_tsvector('search_english', \(title)), 'A')
                                             || setweight(to_tsvector('search_english', \(text)), 'C') END,
                CASE WHEN \(searchable) THEN to_tsvector('search_english', \(title)) END)
            ON CONFLICT (id) DO UPDATE SET
                sequence = EXCLUDED.sequence, status = EXCLUDED.status, title = EXCLUDED.title, content = EXCLUDED.content,
                content_html = EXCLUDED.content_html, content_text = EXCLUDED.content_text, excerpt = EXCLUDED.excerpt,
                slug = EXCLUDED.slug, cover_image = EXCLUDED.cover_image, author_id = EXCLUDED.author_id,
                read_time = EXCLUDED.read_time, created_at = EXCLUDED.created_at, updated_at = EXCLUDED.updated_at,
                published_at = EXCLUDED.published_at, version = EXCLUDED.version, vector = EXCLUDED.vector,
                title_vector = EXCLUDED.title_vector
            WHERE documents.sequence < EXCLUDED.sequence AND NOT documents.deleted
            RETURNING id
            """)
        if searchable, !stored.isEmpty { try await addToLexicon(title + " " + text, in: connection) }
    }

    /// Leaves a tombstone: no content, no vectors, no comments.
    static func remove(postId: String, sequence: Int64, in connection: DatabaseConnection) async throws {
        try await connection.execute(
            """
            UPDATE documents SET deleted = true, sequence = \(sequence), content = '', content_html = '', content_text = '',
                vector = NULL, title_vector = NULL
            WHERE id = \(postId) AND sequence < \(sequence)
            """)
        try await connection.execute("DELETE FROM comments WHERE post_id = \(postId)")
    }

    /// The words of `text` the lexicon does not have yet: folded, not stemmed, letters only.
    static func addToLexicon(_ text: String, in connection: DatabaseConnection) async throws {
        try await connection.execute(
            """
            INSERT INTO lexicon (word)
            SELECT w.word FROM unnest(tsvector_to_array(to_tsvector('search_words', \(text)))) AS w(word)
            WHERE w.word ~ '^[[:alpha:]]{2,40}$' AND NOT EXISTS (SELECT 1 FROM lexicon l WHERE l.word = w.word)
            ORDER BY w.word
            ON CONFLICT (word) DO NOTHING
            """)
    }
}
