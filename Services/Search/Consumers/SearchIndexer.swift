import Foundation
import Metrics
import PostlyEvents
import PostlyMarkdown
import PostlyModels
import PostlyPostgres

/// Keeps the index's tables from `postly.posts`, `postly.users` and `postly.comments`: a
/// published post is indexed (title weighted above content) and its new words go to the
/// lexicon; a draft or deleted post keeps its row without vectors, so it is never found. Each
/// change is logged (`ChangeLog`) for every instance's index in memory. The runner has dropped
/// stale and repeated events already; the row guards (`sequence`, tombstones) make a second
/// consumer replaying the topics (a reindex) just as safe.
struct SearchIndexer: EventHandler {
    /// Seconds from an event's commit (`occurredAt`) to its application, for the last one.
    private let lag = Gauge(label: "postly_search_index_lag_seconds")
    /// When the newest applied event was committed (Unix seconds): now minus it is the lag
    /// while nothing new arrives.
    private let newest = Gauge(label: "postly_search_newest_event_timestamp_seconds")

    func apply(_ event: Event, in connection: DatabaseConnection) async throws {
        switch event.data {
        case .postCreated(let snapshot), .postUpdated(let snapshot):
            // Takes the change log's lock in its statement: a round trip less for the most
            // common event.
            try await Self.index(snapshot, sequence: event.sequence, in: connection)
        default:
            try await ChangeLog.lock(in: connection)
            try await applyOther(event, in: connection)
        }
        let occurredAt = event.occurredAt.timeIntervalSince1970
        lag.record(max(0, Date().timeIntervalSince1970 - occurredAt))
        newest.record(occurredAt)
    }

    private func applyOther(_ event: Event, in connection: DatabaseConnection) async throws {
        switch event.data {
        case .postCreated, .postUpdated, .sessionRevoked:
            return
        case .postDeleted(let snapshot):
            try await Self.remove(postId: snapshot.post.id, sequence: event.sequence, in: connection)
        case .postLiked(let like), .postUnliked(let like):
            let changed = try await connection.execute(
                "UPDATE documents SET likes = \(like.likes), sequence = \(event.sequence) WHERE id = \(like.postId) AND sequence < \(event.sequence)")
            if changed > 0 { try await ChangeLog.record(post: like.postId, in: connection) }
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
            try await ChangeLog.record(post: comment.postId, in: connection)
        case .commentDeleted(let snapshot):
            let comment = snapshot.comment
            try await connection.execute(
                """
                INSERT INTO comments (id, post_id, content, author_id, author_name, author_picture, created_at, deleted)
                VALUES (\(comment.id), \(comment.postId), '', \(comment.author.userId), '', NULL, \(comment.createdAt), true)
                ON CONFLICT (id) DO UPDATE SET deleted = true, content = ''
                """)
            try await ChangeLog.record(post: comment.postId, in: connection)
        }
    }

    /// Stores the post as the event carries it, its texts split here (`TextSplit`) where they
    /// are plain (the trigger splits the others and, when it is published, makes its vectors),
    /// adds its new words to the lexicon and logs the change, in one statement that takes the
    /// change log's lock first.
    static func index(_ snapshot: PostSnapshot, sequence: Int64, in connection: DatabaseConnection) async throws {
        var post = snapshot.post
        // An event written before posts carried its rendering is rendered here, as posts does.
        let legacy = snapshot.contentText == nil ? Markdown.render(post.content) : nil
        post.contentHtml = post.contentHtml ?? legacy?.html
        let text = snapshot.contentText ?? legacy?.text ?? ""
        let title = post.title
        let searchable = post.status == .published
        let json = String(decoding: try PostlyJSON.encode(post), as: UTF8.self)
        let titleSplit = TextSplit(title), contentSplit = TextSplit(text)
        let split = titleSplit.flatMap { title in contentSplit.map { title.lexiconWords + $0.lexiconWords } }
        let words = searchable ? Set(split ?? []).sorted() : []
        let stored = try await connection.query(
            """
            WITH locked AS (\(unescaped: ChangeLog.lockSelect)),
            stored AS (
                INSERT INTO documents (
                    id, sequence, status, title, content_text, author_id, published_at, post,
                    title_tokens, title_lexemes, content_tokens, content_lexemes, content_positions)
                VALUES (
                    \(post.id), \(sequence), \(post.status.rawValue), \(title), \(text), \(post.author.userId), \(post.publishedAt),
                    \(json)::jsonb, \(titleSplit?.tokens), \(titleSplit?.lexemes), \(contentSplit?.tokens), \(contentSplit?.lexemes),
                    \(contentSplit?.firstPositions)::tsvector)
                ON CONFLICT (id) DO UPDATE SET
                    sequence = EXCLUDED.sequence, status = EXCLUDED.status, title = EXCLUDED.title,
                    content_text = EXCLUDED.content_text, author_id = EXCLUDED.author_id, published_at = EXCLUDED.published_at,
                    post = EXCLUDED.post, title_tokens = EXCLUDED.title_tokens, title_lexemes = EXCLUDED.title_lexemes,
                    content_tokens = EXCLUDED.content_tokens, content_lexemes = EXCLUDED.content_lexemes,
                    content_positions = EXCLUDED.content_positions
                WHERE documents.sequence < EXCLUDED.sequence AND NOT documents.deleted
                RETURNING id
            ),
            words AS (
                INSERT INTO lexicon (word)
                SELECT w.word FROM unnest(\(words)::text[]) AS w(word)
                WHERE EXISTS (SELECT 1 FROM stored) AND NOT EXISTS (SELECT 1 FROM lexicon l WHERE l.word = w.word)
                ORDER BY w.word
                ON CONFLICT (word) DO NOTHING
            ),
            -- The lock is taken before the change's position is.
            changed AS (INSERT INTO changes (post_id) SELECT s.id FROM stored s, locked RETURNING post_id)
            SELECT post_id FROM changed
            """)
        if !stored.isEmpty, searchable, split == nil { try await addToLexicon(title + " " + text, in: connection) }
        try await AuthorsProjection.applyPostAuthor(post.author, in: connection)
    }

    /// Leaves a tombstone: no content, no vectors, no comments.
    static func remove(postId: String, sequence: Int64, in connection: DatabaseConnection) async throws {
        let changed = try await connection.execute(
            """
            UPDATE documents SET deleted = true, sequence = \(sequence), content_text = '', post = NULL, content_tokens = NULL
            WHERE id = \(postId) AND sequence < \(sequence)
            """)
        try await connection.execute("DELETE FROM comments WHERE post_id = \(postId)")
        if changed > 0 { try await ChangeLog.record(post: postId, in: connection) }
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
