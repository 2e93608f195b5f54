import Foundation
import PostlyEvents
import PostlyModels
import PostlyPostgres
import PostlyService

/// `SearchRepository` on the service's PostgreSQL database and the lexicon in memory: the way
/// search answered before it kept its index in memory, now the oracle the tests hold
/// `MemorySearchRepository` to.
///
/// A search is four statements: the query's words as the index folds them; the ranked page
/// with the number of all matches; the page's posts, then their comments (`StoredResults`).
/// Every query word becomes a stemmed query of its alternatives (`search_query`), matched
/// against the published posts' vectors, their titles' vectors (both made from the stored
/// split for each search: slow, and only the tests search this way) and the authors' names;
/// each hit sets the word's bit, and the bits counted per post give the ranking: words
/// matched, words in the title, words matched exactly, then the newest. Only the page is
/// sorted and read in full; the rest is counted.
struct PostgresSearchRepository: SearchRepository {
    let database: Database
    let lexicon: Lexicon

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
                SELECT total.count AS total, (SELECT lexemes FROM matched) AS matched, page.id
                FROM (SELECT count(*) FROM ranked) total LEFT JOIN page ON true
                ORDER BY page.matched DESC, page.titled DESC, page.exact DESC, page.published_at DESC NULLS LAST, page.id
                """)
            let total = try rows.first?.decode("total", as: Int.self) ?? 0
            let matched = try rows.first?.decode("matched", as: [String].self) ?? []
            let ids = try rows.filter { !$0.isNull("id") }.map { try $0.decode("id", as: String.self) }
            let stored = try await StoredResults.read(ids, matched: matched, includeHTML: includeHTML, in: connection)
            let results = ids.compactMap { stored[$0] }
            return SearchPage(ids: results.map(\.post.id), total: total, body: try PostlyJSON.encode(results))
        }
    }
}
