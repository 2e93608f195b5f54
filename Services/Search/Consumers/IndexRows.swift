import Foundation
import PostlyEvents
import PostlyModels
import PostlyPostgres

/// What the index in memory is read from: the posts, authors, comments and lexicon that
/// `SearchIndexer` keeps in the service's tables, whole (`load`) or what the change log says
/// changed (`changes(after:wordsAfter:)`, one statement, so one moment of the tables and one
/// round trip however busy the database is).
struct IndexRows {
    let database: Database
    /// Posts read per statement: a few megabytes of rows at a time, which is what the load
    /// leaves behind in each of malloc's arenas once it is done.
    var chunk = 100

    /// The whole index, and the lexicon with its stems.
    struct Snapshot {
        /// Which table the change log is: a reindex switches the tables, which changes it.
        var generation: Int64
        var state: IndexState
        var words: [(word: String, stems: [String])]
        var wordsUpTo: Int64
    }

    /// What changed after a position.
    struct Changes {
        var generation: Int64
        /// The last position read; nil when nothing changed.
        var newest: Int64?
        /// Whether more changes wait than one read takes.
        var isPartial: Bool
        var words: [(word: String, stems: [String])]
        var wordsUpTo: Int64?
        var authors: [(id: String, author: IndexedAuthor)] = []
        /// Published posts as they are now.
        var posts: [IndexedPost] = []
        /// Posts changed that are not to be found (any more): drafts, deleted.
        var removed: [String] = []
    }

    /// - Parameter tables: what the index numbers its texts with, new ones unless a test
    ///   compares two indexes' texts by their numbers.
    func load(tables: IndexTables = IndexTables()) async throws -> Snapshot {
        try await database.transaction(isolation: .repeatableRead) { connection in
            let head = try await connection.query(
                "SELECT to_regclass('changes')::oid::bigint AS generation, coalesce((SELECT max(position) FROM changes), 0) AS newest")[0]
            var state = IndexState(tables: tables)
            state.position = try head.decode("newest")
            let words = try await connection.query("SELECT word AS key, added AS number, lexemes FROM lexicon ORDER BY added")
            for row in try await connection.query(
                "SELECT user_id AS key, name AS body, profile_picture AS picture, tsvector_to_array(name_vector) AS lexemes FROM authors")
            {
                try state.setAuthor(row.decode("key"), author(row, tables: state.tables))
            }
            var after = ""
            while true {
                let rows = try await connection.query(
                    """
                    SELECT d.id AS key, \(unescaped: Self.postColumns) FROM documents d
                    WHERE d.status = 'published' AND NOT d.deleted AND d.post IS NOT NULL AND d.id > \(after) ORDER BY d.id LIMIT \(chunk)
                    """)
                for row in rows { state.upsert(try post(row, tables: state.tables)) }
                guard rows.count == chunk, let last = rows.last else { break }
                after = try last.decode("key")
            }
            return Snapshot(
                generation: try head.decode("generation"), state: state, words: try words.map(word),
                wordsUpTo: try words.last?.decode("number") ?? 0)
        }
    }

    /// The changes after `position` (at most `chunk` of them) with the posts and authors they
    /// name as they are now, numbered with `tables` (the index's they are for), and the
    /// lexicon's words after `wordsAfter`: read in that order in one statement, so the words of
    /// every post read are among the words. A post whose last change read is one of `stored` is
    /// taken from there, not read.
    func changes(
        after position: Int64, wordsAfter: Int64, stored: [Int64: StoredPosts.Stored] = [:], tables: IndexTables
    ) async throws -> Changes {
        let rows = try await database.query(
            """
            WITH changed AS MATERIALIZED (
                SELECT position, post_id, author_id FROM changes WHERE position > \(position) ORDER BY position LIMIT \(chunk)
            ),
            latest AS (SELECT post_id, max(position) AS position FROM changed WHERE post_id IS NOT NULL GROUP BY post_id)
            SELECT 'log' AS kind, NULL AS key, (SELECT max(position) FROM changed) AS number, NULL::int AS likes, NULL AS body,
                   NULL AS title_tokens, NULL AS title_lexemes, NULL AS content_tokens, NULL AS content_lexemes, NULL AS comments,
                   NULL AS picture, NULL::text[] AS lexemes,
                   (SELECT count(*) FROM changed) AS count, to_regclass('changes')::oid::bigint AS generation
            UNION ALL
            -- A post changed and no longer published has no row here: it is removed.
            SELECT 'post', c.post_id, \(unescaped: Self.postColumns), NULL, NULL
            FROM latest c
            LEFT JOIN documents d ON d.id = c.post_id AND d.status = 'published' AND NOT d.deleted AND d.post IS NOT NULL
            WHERE c.position <> ALL(\(stored.keys.map(Int.init)))
            UNION ALL
            SELECT 'stored', post_id, position, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
            FROM latest WHERE position = ANY(\(stored.keys.map(Int.init)))
            UNION ALL
            SELECT 'author', a.user_id, NULL, NULL, a.name, NULL, NULL, NULL, NULL, NULL, a.profile_picture,
                   tsvector_to_array(a.name_vector), NULL, NULL
            FROM authors a WHERE a.user_id IN (SELECT author_id FROM changed)
            UNION ALL
            SELECT 'word', word, added, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, lexemes, NULL, NULL
            FROM lexicon WHERE added > \(wordsAfter)
            """)
        var changes = Changes(generation: 0, newest: nil, isPartial: false, words: [], wordsUpTo: nil)
        for row in rows {
            switch try row.decode("kind", as: String.self) {
            case "log":
                changes.generation = try row.decode("generation")
                changes.newest = try row.decode("number")
                changes.isPartial = try row.decode("count", as: Int.self) == chunk
            case "post":
                if row.isNull("body") {
                    changes.removed.append(try row.decode("key"))
                } else {
                    changes.posts.append(try post(row, tables: tables))
                }
            case "stored":
                switch stored[try row.decode("number")] {
                case .published(let published):
                    changes.posts.append(post(published, tables: tables))
                case .hidden, nil:  // (nil never: only `stored`'s positions are asked for)
                    changes.removed.append(try row.decode("key"))
                }
            case "author":
                changes.authors.append((try row.decode("key"), try author(row, tables: tables)))
            default:
                changes.words.append(try word(row))
                changes.wordsUpTo = max(changes.wordsUpTo ?? 0, try row.decode("number"))
            }
        }
        return changes
    }

    // MARK: - Rows

    /// A post's columns (of `documents d`) as `post(_:)` reads them: `number` is when it was
    /// published, in microseconds since 1970. The texts' tokens and lexemes
    /// are joined with U+E000 (which no token holds): one string a column instead of an array of
    /// thousands; the comments are one JSON array, oldest first.
    private static let postColumns = """
        (extract(epoch FROM d.published_at) * 1000000)::bigint AS number, d.likes, (d.post - 'contentHtml')::text AS body,
        array_to_string(d.title_tokens, U&'\\E000') AS title_tokens, array_to_string(d.title_lexemes, U&'\\E000') AS title_lexemes,
        array_to_string(d.content_tokens, U&'\\E000') AS content_tokens,
        array_to_string(d.content_lexemes, U&'\\E000') AS content_lexemes,
        (SELECT json_agg(json_build_object(
                    '_id', c.id, 'postId', c.post_id, 'content', c.content,
                    'author', json_build_object('userId', c.author_id, 'name', c.author_name, 'profilePicture', c.author_picture),
                    'createdAt', to_char(c.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'likes', 0)
                ORDER BY c.created_at, c.id)
         FROM comments c WHERE c.post_id = d.id AND NOT c.deleted)::text AS comments,
        NULL AS picture, NULL::text[] AS lexemes
        """

    private func post(_ row: Row, tables: IndexTables) throws -> IndexedPost {
        let decoder = PostlyJSON.decoder()
        let post = try decoder.decode(Post.self, from: Data(try row.decode("body", as: [UInt8].self)))
        let comments = try row.decode("comments", as: [UInt8]?.self).map { try decoder.decode([Comment].self, from: Data($0)) }
        return indexed(
            post, likes: try row.decode("likes"), publishedAt: try row.decode("number"), comments: comments ?? [],
            title: try split(row, "title_tokens", "title_lexemes"), content: try split(row, "content_tokens", "content_lexemes"),
            tables: tables)
    }

    /// A post as this instance's consumer stored it (it has no comments).
    private func post(_ stored: StoredPosts.Published, tables: IndexTables) -> IndexedPost {
        indexed(
            stored.post, likes: stored.likes, publishedAt: stored.publishedAt, comments: [],
            title: (stored.title.tokens, stored.title.lexemes), content: (stored.content.tokens, stored.content.lexemes),
            tables: tables)
    }

    private func indexed(
        _ post: Post, likes: Int, publishedAt: Int64?, comments: [Comment], title: (tokens: [String], lexemes: [String]),
        content: (tokens: [String], lexemes: [String]), tables: IndexTables
    ) -> IndexedPost {
        IndexedPost(
            id: post.id, author: post.author, publishedAt: publishedAt ?? .min, likes: likes,
            listed: ListedPost(post), comments: comments, title: text(title, tables: tables), content: text(content, tables: tables))
    }

    private func author(_ row: Row, tables: IndexTables) throws -> IndexedAuthor {
        IndexedAuthor(
            name: try row.decode("body"), profilePicture: try row.decode("picture"),
            nameLexemes: tables.lexemes.number(try row.decode("lexemes", as: [String].self)))
    }

    private func word(_ row: Row) throws -> (word: String, stems: [String]) {
        (try row.decode("key"), try row.decode("lexemes"))
    }

    /// A text's tokens and its words' lexemes, as the columns keep them.
    private func split(_ row: Row, _ tokensColumn: String, _ lexemesColumn: String) throws -> (tokens: [String], lexemes: [String]) {
        let split = Self.split(try row.decode(tokensColumn, as: [UInt8].self))
        return (split, split.count < 2 ? [] : Self.split(try row.decode(lexemesColumn, as: [UInt8].self)))
    }

    /// A text as the index keeps it, from its tokens and its words' lexemes.
    private func text(_ split: (tokens: [String], lexemes: [String]), tables: IndexTables) -> IndexedText {
        let words = split.tokens.count / 2
        var wordLexemes = split.lexemes
        // Never otherwise; a text and its lexemes are written together.
        if wordLexemes.count != words {
            wordLexemes = Array(wordLexemes.prefix(words)) + Array(repeating: "", count: max(0, words - wordLexemes.count))
        }
        return IndexedText(tokens: tables.tokens.number(split.tokens, lexemes: tables.lexemes.number(wordLexemes)))
    }

    /// The parts of `joined` between each U+E000 (none when it is empty), found by their bytes:
    /// a character (a grapheme) may begin with U+E000 and a combining mark.
    static func split(_ joined: [UInt8]) -> [String] {
        guard !joined.isEmpty else { return [] }
        var parts: [String] = []
        var start = 0, index = 0
        while index < joined.count {
            if joined[index] == 0xEE, index + 2 < joined.count, joined[index + 1] == 0x80, joined[index + 2] == 0x80 {
                parts.append(String(decoding: joined[start..<index], as: UTF8.self))
                index += 3
                start = index
            } else {
                index += 1
            }
        }
        parts.append(String(decoding: joined[start...], as: UTF8.self))
        return parts
    }
}
