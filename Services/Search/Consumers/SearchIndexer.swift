import Foundation
import Metrics
import PostlyEvents
import PostlyMarkdown
import PostlyModels
import PostlyPostgres

/// Keeps the index's tables from `postly.posts`, `postly.users` and `postly.comments`: a
/// published post is indexed (title weighted above content) and its new words go to the
/// lexicon; a draft or deleted post keeps its row without its texts, and is not found. Each
/// change is logged (`ChangeLog`) for every instance's index in memory. The runner has dropped
/// stale and repeated events already; the row guards (`sequence`, tombstones) make a second
/// consumer replaying the topics (a reindex) just as safe.
struct SearchIndexer: BatchEventHandler {
    /// This instance's index in memory, when the indexer writes the tables it is loaded from:
    /// - each word of its lexicon is in the `lexicon` table too (the lexicon only grows, and a
    ///   reindex keeps every word), so only a post's other words are sent to be added;
    /// - the posts stored are handed to it (`StoredPosts`), so its follower need not read them
    ///   back.
    ///
    /// Nil for a reindex's replay into tables of its own: it sends every word, hands nothing.
    var index: SearchIndex?

    /// Seconds from an event's commit (`occurredAt`) to its application, for the last one.
    private let lag = Gauge(label: "postly_search_index_lag_seconds")
    /// When the newest applied event was committed (Unix seconds): now minus it is the lag
    /// while nothing new arrives.
    private let newest = Gauge(label: "postly_search_newest_event_timestamp_seconds")

    /// Posts' creations and updates one after another (a backlog, a burst) are stored together
    /// in one statement; every other event on its own, in order.
    func apply(_ events: [Event], in connection: DatabaseConnection) async throws {
        var posts: [(snapshot: PostSnapshot, sequence: Int64)] = []
        for event in events {
            switch event.data {
            case .postCreated(let snapshot), .postUpdated(let snapshot):
                posts.append((snapshot, event.sequence))
            default:
                try await index(posts, in: connection)
                posts = []
                try await ChangeLog.lock(in: connection)
                try await applyOther(event, in: connection)
            }
        }
        try await index(posts, in: connection)
        guard let last = events.last else { return }
        let occurredAt = last.occurredAt.timeIntervalSince1970
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

    /// Stores the posts as the events carry them (the newest event of each) and their authors.
    private func index(_ posts: [(snapshot: PostSnapshot, sequence: Int64)], in connection: DatabaseConnection) async throws {
        var newest: [String: (snapshot: PostSnapshot, sequence: Int64)] = [:]
        for post in posts where post.sequence > newest[post.snapshot.post.id]?.sequence ?? .min {
            newest[post.snapshot.post.id] = post
        }
        guard !newest.isEmpty else { return }
        let sorted = newest.values.sorted { $0.snapshot.post.id < $1.snapshot.post.id }
        for statement in Self.statements(of: sorted) {
            let (documents, rows) = await Self.prepare(statement, knownWords: index?.lexicon)
            let stored = try await Self.store(documents, rows: rows, in: connection)
            index?.stored.add(Self.handOff(documents, stored))
        }
        try await AuthorsProjection.applyPostAuthors(sorted.map(\.snapshot.post.author), in: connection)
    }

    /// The most text one statement of `store` carries (its JSON is about four times as much):
    /// a backlog of 64 imported posts of 900 KiB made one parameter of 350 MB, past what a
    /// jsonb holds, and the indexer failed on it again and again.
    static let statementTextBytes = 16 << 20

    /// `posts` in order, cut into statements of at most `statementTextBytes` of text (at least
    /// one post each).
    static func statements(of posts: [(snapshot: PostSnapshot, sequence: Int64)]) -> [[(snapshot: PostSnapshot, sequence: Int64)]] {
        var statements: [[(snapshot: PostSnapshot, sequence: Int64)]] = []
        var bytes = 0
        for post in posts {
            let text = textBytes(of: post.snapshot)
            if statements.isEmpty || bytes + text > statementTextBytes {
                statements.append([])
                bytes = 0
            }
            statements[statements.count - 1].append(post)
            bytes += text
        }
        return statements
    }

    static func textBytes(of snapshot: PostSnapshot) -> Int {
        snapshot.post.title.utf8.count + snapshot.post.content.utf8.count + (snapshot.post.contentHtml?.utf8.count ?? 0)
            + (snapshot.contentText?.utf8.count ?? 0)
    }

    /// The posts' documents and their rows' JSON, made on every core at once: splitting the
    /// texts is most of what a batch costs this process, and the database waits for it.
    private static func prepare(
        _ posts: [(snapshot: PostSnapshot, sequence: Int64)], knownWords: Lexicon?
    ) async -> (documents: [Document], rows: [[UInt8]]) {
        await withTaskGroup(of: (Int, Document, [UInt8]).self) { group in
            for (offset, post) in posts.enumerated() {
                group.addTask {
                    let document = Document(post, knownWords: knownWords)
                    var row = JSONWriter(capacity: 4096 + 4 * document.text.utf8.count)
                    document.write(to: &row)
                    return (offset, document, row.bytes)
                }
            }
            var prepared = [(Document, [UInt8])?](repeating: nil, count: posts.count)
            for await (offset, document, row) in group { prepared[offset] = (document, row) }
            let all = prepared.compactMap { $0 }
            return (all.map(\.0), all.map(\.1))
        }
    }

    /// What `store` stored as the follower would read it back, where that is exactly the
    /// document: split here, and without comments.
    private static func handOff(_ documents: [Document], _ stored: [String: StoredRow]) -> [StoredPosts.Key: StoredPosts.Stored] {
        var handed: [StoredPosts.Key: StoredPosts.Stored] = [:]
        for document in documents {
            guard let row = stored[document.id], let title = document.titleSplit, let content = document.contentSplit else { continue }
            let key = StoredPosts.Key(generation: row.generation, position: row.position)
            if !document.searchable {
                handed[key] = .hidden
            } else if !row.hasComments {
                handed[key] = .published(.init(post: document.post, likes: row.likes, publishedAt: row.publishedAt, title: title, content: content))
            }
        }
        return handed
    }

    /// A document `store` stored: where in the change log, and what the table adds to it.
    private struct StoredRow {
        var generation: Int64
        var position: Int64
        var likes: Int
        /// Microseconds since 1970.
        var publishedAt: Int64?
        var hasComments: Bool
    }

    /// Stores `documents`, their texts split here (`TextSplit`) where they are plain (the
    /// trigger splits the others), adds their new words to the lexicon and logs the changes,
    /// in one statement after the change log's lock is taken (so the statement sees every
    /// change logged before its own). Returns the
    /// documents stored, by id.
    private static func store(_ documents: [Document], rows: [[UInt8]], in connection: DatabaseConnection) async throws -> [String: StoredRow] {
        var array: [UInt8] = [UInt8(ascii: "[")]
        array.reserveCapacity(rows.reduce(2) { $0 + $1.count + 1 })
        for (offset, row) in rows.enumerated() {
            if offset > 0 { array.append(UInt8(ascii: ",")) }
            array.append(contentsOf: row)
        }
        array.append(UInt8(ascii: "]"))
        let json = String(decoding: array, as: UTF8.self)
        try await ChangeLog.lock(in: connection)
        var stored: [String: StoredRow] = [:]
        for row in try await connection.query(
            """
            WITH
            -- The splits come joined (`Document.separator`): one JSON string each, parsed far
            -- faster than arrays of thousands.
            batch AS (
                SELECT r.id, r.sequence, r.status, r.title, r.content_text, r.author_id, r.published_at, r.likes, r.post,
                       (string_to_array(r.title_tokens, U&'\\E000'))[2:] AS title_tokens,
                       (string_to_array(r.title_lexemes, U&'\\E000'))[2:] AS title_lexemes,
                       (string_to_array(r.content_tokens, U&'\\E000'))[2:] AS content_tokens,
                       (string_to_array(r.content_lexemes, U&'\\E000'))[2:] AS content_lexemes,
                       (string_to_array(r.words, U&'\\E000'))[2:] AS words
                FROM jsonb_to_recordset(\(json)::jsonb) AS r(
                    id text, sequence bigint, status text, title text, content_text text, author_id text,
                    published_at timestamptz, likes integer, post jsonb, title_tokens text, title_lexemes text, content_tokens text,
                    content_lexemes text, words text)
            ),
            stored AS (
                INSERT INTO documents (
                    id, sequence, status, title, content_text, author_id, published_at, likes, post,
                    title_tokens, title_lexemes, content_tokens, content_lexemes)
                SELECT id, sequence, status, title, content_text, author_id, published_at, likes, post,
                       title_tokens, title_lexemes, content_tokens, content_lexemes
                FROM batch
                ON CONFLICT (id) DO UPDATE SET
                    sequence = EXCLUDED.sequence, status = EXCLUDED.status, title = EXCLUDED.title,
                    content_text = EXCLUDED.content_text, author_id = EXCLUDED.author_id, published_at = EXCLUDED.published_at,
                    likes = EXCLUDED.likes, post = EXCLUDED.post, title_tokens = EXCLUDED.title_tokens, title_lexemes = EXCLUDED.title_lexemes,
                    content_tokens = EXCLUDED.content_tokens, content_lexemes = EXCLUDED.content_lexemes
                WHERE documents.sequence < EXCLUDED.sequence AND NOT documents.deleted
                RETURNING id, likes, (extract(epoch FROM published_at) * 1000000)::bigint AS published_at
            ),
            words AS (
                INSERT INTO lexicon (word)
                SELECT n.word FROM (SELECT DISTINCT w.word FROM batch b JOIN stored s ON s.id = b.id, unnest(b.words) AS w(word)) AS n
                -- OFFSET 0 keeps the lookup a probe of the lexicon's index per word; as a join,
                -- PostgreSQL reads the whole lexicon for every batch (138 ms at 38,000 words on a
                -- busy machine), a cost that grows with the lexicon. A word already there is not
                -- inserted again, which would compute its stems.
                WHERE NOT EXISTS (SELECT 1 FROM lexicon l WHERE l.word = n.word OFFSET 0)
                ORDER BY n.word
                ON CONFLICT (word) DO NOTHING
            ),
            changed AS (INSERT INTO changes (post_id) SELECT id FROM stored RETURNING position, post_id)
            SELECT c.post_id, c.position, s.likes, s.published_at, to_regclass('changes')::oid::bigint AS generation,
                   EXISTS (SELECT 1 FROM comments m WHERE m.post_id = c.post_id AND NOT m.deleted) AS has_comments
            FROM changed c JOIN stored s ON s.id = c.post_id
            """)
        {
            stored[try row.decode("post_id")] = StoredRow(
                generation: try row.decode("generation"), position: try row.decode("position"), likes: try row.decode("likes"),
                publishedAt: try row.decode("published_at"), hasComments: try row.decode("has_comments"))
        }
        // Texts TextSplit leaves to PostgreSQL: their words as PostgreSQL splits them.
        for document in documents where document.words == nil && document.searchable && stored[document.id] != nil {
            try await addToLexicon(document.title + " " + document.text, in: connection)
        }
        return stored
    }

    /// A post as `index` stores it: a row of its statement's `jsonb_to_recordset`.
    private struct Document: JSONWritable, Sendable {
        var post: Post
        var sequence: Int64
        var text: String
        var titleSplit: TextSplit?
        var contentSplit: TextSplit?
        /// The words of a searchable post the lexicon may not have yet (none for a draft); nil
        /// when PostgreSQL splits it.
        var words: [String]?

        var id: String { post.id }
        var title: String { post.title }
        var searchable: Bool { post.status == .published }

        init(_ event: (snapshot: PostSnapshot, sequence: Int64), knownWords: Lexicon?) {
            post = event.snapshot.post
            sequence = event.sequence
            if post.status == .published {
                // An event written before posts carried its rendering is rendered here, as posts does.
                let legacy = event.snapshot.contentText == nil ? Markdown.render(post.content) : nil
                post.contentHtml = post.contentHtml ?? legacy?.html
                text = event.snapshot.contentText ?? legacy?.text ?? ""
            } else {
                // A post nobody finds keeps no text here, only its row (its sequence, status and
                // author): its words would cost the split, the row and the index's upkeep for
                // nothing (a draft's row took 3.6 ms of PostgreSQL's statement time a create).
                // Its publishing event carries the whole post again.
                post.title = ""
                text = ""
            }
            titleSplit = TextSplit(post.title)
            contentSplit = TextSplit(text)
            if let titleSplit, let contentSplit {
                let all = searchable ? Set(titleSplit.lexiconWords + contentSplit.lexiconWords) : []
                words = all.filter { knownWords?.stems(of: $0) == nil }
            }
        }

        /// What `TextSplit` makes never holds U+E000: its parts are written each after one, so
        /// that the statement's `(string_to_array(column, U&'\E000'))[2:]` is the parts again,
        /// an empty part or none included.
        static let separator = "\u{E000}"

        func write(to json: inout JSONWriter) {
            json.object { json in
                json.field("id", post.id)
                json.field("sequence", Int(sequence))
                json.field("status", post.status.rawValue)
                json.field("title", post.title)
                json.field("content_text", text)
                json.field("author_id", post.author.userId)
                json.field("published_at", post.publishedAt)
                json.field("likes", post.likes)
                if searchable { json.field("post", post) } else { json.field("post", nil as String?) }
                json.field("title_tokens", eachAfter: Self.separator, titleSplit?.tokens)
                json.field("title_lexemes", eachAfter: Self.separator, titleSplit?.lexemes)
                json.field("content_tokens", eachAfter: Self.separator, contentSplit?.tokens)
                json.field("content_lexemes", eachAfter: Self.separator, contentSplit?.lexemes)
                json.field("words", eachAfter: Self.separator, words)
            }
        }
    }

    /// Leaves a tombstone: no content, no comments.
    static func remove(postId: String, sequence: Int64, in connection: DatabaseConnection) async throws {
        let changed = try await connection.execute(
            """
            UPDATE documents SET deleted = true, sequence = \(sequence), content_text = '', post = NULL, content_tokens = NULL
            WHERE id = \(postId) AND sequence < \(sequence)
            """)
        try await connection.execute("DELETE FROM comments WHERE post_id = \(postId)")
        if changed > 0 { try await ChangeLog.record(post: postId, in: connection) }
    }

    /// The words of `text` the lexicon does not have yet: folded, not stemmed, letters only
    /// (`OFFSET 0` as in `store`).
    static func addToLexicon(_ text: String, in connection: DatabaseConnection) async throws {
        try await connection.execute(
            """
            INSERT INTO lexicon (word)
            SELECT w.word FROM unnest(tsvector_to_array(to_tsvector('search_words', \(text)))) AS w(word)
            WHERE w.word ~ '^[[:alpha:]]{2,40}$' AND NOT EXISTS (SELECT 1 FROM lexicon l WHERE l.word = w.word OFFSET 0)
            ORDER BY w.word
            ON CONFLICT (word) DO NOTHING
            """)
    }
}
