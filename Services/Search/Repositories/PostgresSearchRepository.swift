import Foundation
import PostlyEvents
import PostlyModels
import PostlyPostgres
import PostlyService

/// `SearchRepository` on the service's PostgreSQL database and the lexicon in memory: the way
/// search answered before it kept its index in memory, now the oracle the tests hold
/// `MemorySearchRepository` to.
///
/// A search is three statements: the query's words as the index folds them; the ranked page
/// with the number of all matches; the comments of the page's posts. Every query word becomes
/// a stemmed query of its alternatives (`search_query`), matched against the published posts'
/// vectors, their titles' vectors (both made from the stored split for each search: slow, and
/// only the tests search this way) and the authors' names; each hit sets the word's bit, and
/// the bits counted per post give the ranking: words matched, words in the title, words
/// matched exactly, then the newest. Only the page is sorted and read in full; the rest is
/// counted. The highlights are made here from the words the index stored for each title and
/// content (`SplitText`), the excerpt around the first matched word (`search_positions`): no
/// text is parsed again for a search.
struct PostgresSearchRepository: SearchRepository {
    let database: Database
    let lexicon: Lexicon

    private static let decoder = PostlyJSON.decoder()

    func search(_ text: String, page: PageRequest, includeHTML: Bool) async throws -> SearchPage {
        try await database.withConnection { connection in
            let words = try await connection.query(MemorySearchRepository.words(of: text)).map { try $0.decode("word", as: String.self) }
            let plan = QueryPlan(words: words, lexicon: lexicon)
            guard !plan.words.isEmpty else { return .empty }

            let exact = plan.words.map(\.text)
            let alternatives = plan.words.map { $0.alternatives.joined(separator: " ") }
            let everything = alternatives.joined(separator: " ")
            let rows = try await connection.query(
                """
                WITH words AS MATERIALIZED (
                    SELECT w.i::int AS i, search_query(w.exact) AS exact_q, search_query(w.alternatives) AS any_q,
                           w.exact = w.alternatives AS simple
                    FROM unnest(\(exact)::text[], \(alternatives)::text[]) WITH ORDINALITY AS w(exact, alternatives, i)
                ),
                -- Every lexeme the query looks for: the words the highlights mark.
                matched AS MATERIALIZED (
                    SELECT tsvector_to_array(to_tsvector('search_english', \(everything))) AS lexemes
                ),
                -- The published posts' vectors, made from their split as the index in memory
                -- reads it: the title weighted A, the content C.
                found AS MATERIALIZED (
                    SELECT d.id, d.published_at, d.author_id, t.title_vector,
                           setweight(t.title_vector, 'A') || setweight(array_to_tsvector(array_remove(d.content_lexemes, '')), 'C') AS vector
                    FROM documents d CROSS JOIN LATERAL (SELECT array_to_tsvector(array_remove(d.title_lexemes, '')) AS title_vector) t
                    WHERE d.status = 'published' AND NOT d.deleted
                ),
                hits AS (
                    SELECT d.id, d.published_at, 1 << w.i AS word, CASE WHEN w.simple THEN 1 << w.i ELSE 0 END AS exact, 0 AS titled
                    FROM words w JOIN found d ON d.vector @@ w.any_q
                    UNION ALL
                    -- Titles from their own index: a check of every match's title costs more.
                    SELECT d.id, d.published_at, 0, 0, 1 << w.i
                    FROM words w JOIN found d ON d.title_vector @@ w.any_q
                    UNION ALL
                    SELECT d.id, d.published_at, 0, 1 << w.i, 0
                    FROM words w JOIN found d ON d.vector @@ w.exact_q
                    WHERE NOT w.simple
                    UNION ALL
                    SELECT d.id, d.published_at, 1 << w.i, CASE WHEN a.name_vector @@ w.exact_q THEN 1 << w.i ELSE 0 END, 0
                    FROM words w JOIN authors a ON a.name_vector @@ w.any_q
                    JOIN found d ON d.author_id = a.user_id
                ),
                ranked AS MATERIALIZED (
                    SELECT id, published_at, bit_count(bit_or(word)::bit(32)) AS matched,
                           bit_count(bit_or(titled)::bit(32)) AS titled, bit_count(bit_or(exact)::bit(32)) AS exact
                    FROM hits GROUP BY id, published_at
                ),
                -- Only the page is sorted in full; the rest is only counted.
                page AS MATERIALIZED (
                    SELECT * FROM ranked
                    ORDER BY matched DESC, titled DESC, exact DESC, published_at DESC NULLS LAST, id
                    LIMIT \(page.limit) OFFSET \(page.offset)
                )
                SELECT total.count AS total, (SELECT lexemes FROM matched) AS matched, found.*
                FROM (SELECT count(*) FROM ranked) total
                LEFT JOIN LATERAL (
                    SELECT page.matched, page.titled, page.exact, d.id, d.published_at,
                           (CASE WHEN \(includeHTML) THEN d.post ELSE d.post - 'contentHtml' END)::text AS post,
                           d.likes, a.name AS author_name, a.profile_picture AS author_picture, d.title_tokens, d.title_lexemes,
                           d.content_tokens[2 * around.first_word - 1 : 2 * around.last_word + 1] AS excerpt_tokens,
                           d.content_lexemes[around.first_word : around.last_word] AS excerpt_lexemes
                    FROM page JOIN documents d USING (id) JOIN authors a ON a.user_id = d.author_id
                    -- The words the excerpt can show: around the first match, else the first ones.
                    -- The first match is looked up among the matched lexemes' first positions.
                    CROSS JOIN LATERAL (
                        SELECT coalesce(greatest(first_match - \(SplitText.wordsBeforeMatch), 1), 1) AS first_word,
                               coalesce(first_match + \(SplitText.wordsAfterMatch), \(SplitText.excerptMinWords)) AS last_word
                        FROM (SELECT min(p.positions[1]) AS first_match
                              FROM unnest(ts_filter(setweight(search_positions(d.content_lexemes), 'A', (SELECT lexemes FROM matched)), '{a}')) AS p
                        ) AS first
                    ) AS around
                ) found ON true
                ORDER BY found.matched DESC, found.titled DESC, found.exact DESC, found.published_at DESC NULLS LAST, found.id
                """)
            let total = try rows.first?.decode("total", as: Int.self) ?? 0
            let matched = Set(try rows.first?.decode("matched", as: [String].self) ?? [])
            let found = rows.filter { !$0.isNull("id") }
            let ids = try found.map { try $0.decode("id", as: String.self) }
            let comments = try await Self.comments(of: ids, in: connection)
            let results = try found.map { row in
                let id = try row.decode("id", as: String.self)
                // The post as its events carried it, with what search keeps current itself.
                var post = try Self.decoder.decode(Post.self, from: Data(try row.decode("post", as: String.self).utf8))
                post.author.name = try row.decode("author_name")
                post.author.profilePicture = try row.decode("author_picture")
                post.likes = try row.decode("likes")
                post.comments = comments[id] ?? []
                post.commentsCount = post.comments.count
                let highlights = Highlights(
                    title: SplitText(tokens: try row.decode("title_tokens"), lexemes: try row.decode("title_lexemes"), matched: matched),
                    content: SplitText(tokens: try row.decode("excerpt_tokens"), lexemes: try row.decode("excerpt_lexemes"), matched: matched))
                return SearchResult(post: post, highlights: highlights)
            }
            return SearchPage(ids: ids, total: total, body: try PostlyJSON.encode(results))
        }
    }

    /// The comments of `postIds`' posts, oldest first, with their authors' current names.
    static func comments(of postIds: [String], in connection: DatabaseConnection) async throws -> [String: [Comment]] {
        guard !postIds.isEmpty else { return [:] }
        let rows = try await connection.query(
            """
            SELECT c.id, c.post_id, c.content, c.author_id, COALESCE(a.name, c.author_name) AS author_name,
                   CASE WHEN a.user_id IS NULL THEN c.author_picture ELSE a.profile_picture END AS author_picture, c.created_at
            FROM comments c LEFT JOIN authors a ON a.user_id = c.author_id
            WHERE c.post_id = ANY(\(postIds)) AND NOT c.deleted
            ORDER BY c.created_at, c.id
            """)
        var comments: [String: [Comment]] = [:]
        for row in rows {
            let comment = try Comment(row: row)
            comments[comment.postId, default: []].append(comment)
        }
        return comments
    }
}
