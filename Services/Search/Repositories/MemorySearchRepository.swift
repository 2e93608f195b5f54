import BitCollections
import PostlyModels
import PostlyPostgres
import PostlyService

/// `SearchRepository` on the index in memory (`SearchIndex`): the query's words, their typos
/// and completions from the lexicon, the posts ranked as sets, and the answer written from
/// each result's JSON kept ready and its content (`ContentCache`, else the database); a post
/// edited since the index listed it, from the tables (`StoredResults`).
struct MemorySearchRepository: SearchRepository {
    let index: SearchIndex
    let contents: ContentCache
    /// Reads the contents not in `contents`, and splits and stems the words of a query that is
    /// not plain text, as the texts were.
    let database: Database

    struct ParsedWord {
        var word: String
        var stems: [String]
    }

    func search(_ text: String, page: PageRequest, includeHTML: Bool) async throws -> SearchPage {
        guard index.isLoaded else { throw APIError.unavailable("The search index is loading", retryAfterSeconds: 1) }
        // Cut as the plan cuts them, so that each planned word goes with its own stems.
        let parsed = QueryPlan.counted(try await words(of: text))
        let plan = QueryPlan(words: parsed.map(\.word), lexicon: index.lexicon)
        guard !plan.words.isEmpty else { return .empty }
        let stems = zip(plan.words, parsed).map { word, parsed in
            var stems = Set(parsed.stems)
            for alternative in word.alternatives.dropFirst() { stems.formUnion(index.lexicon.stems(of: alternative) ?? []) }
            return (alternatives: stems, exact: parsed.stems)
        }
        // The lexemes highlighted: looked up for every word of every listed post's excerpt.
        var matched = BitSet()
        let found: (total: Int, hits: [IndexHit], tokens: TokenTable)
        do {
            found = try index.search(offset: page.offset, limit: page.limit) { lexemes in
                stems.map { stems in
                    let alternatives = lexemes.existing(stems.alternatives)
                    matched.formUnion(alternatives.lazy.map(Int.init))
                    return WordQuery(alternatives: alternatives, exact: lexemes.existing(stems.exact))
                }
            }
        } catch is SearchIndex.NotLoaded {
            throw APIError.unavailable("The search index is loading", retryAfterSeconds: 1)
        }
        let stored = try await contents(of: found.hits, includeHTML: includeHTML)
        // A post edited since the index listed it is written from the tables, as it is now
        // (the index lags them by moments, by a load's length at worst).
        let moved =
            stored.moved.isEmpty
            ? [:]
            : try await database.withConnection { connection in
                try await StoredResults.read(
                    stored.moved, matched: stems.flatMap(\.alternatives), includeHTML: includeHTML, in: connection)
            }
        // A post deleted or unpublished since it was found has no content in the tables any
        // more: when its content is read from them, it is left out.
        let listed = found.hits.filter { stored.contents[$0.post.id] != nil || moved[$0.post.id] != nil }
        var body: [UInt8] = [UInt8(ascii: "[")]
        body.reserveCapacity(listed.reduce(2) { $0 + $1.post.listed.size + (stored.contents[$1.post.id]?.count ?? 8192) + 1024 })
        found.tokens.read { tokens in
            for (number, hit) in listed.enumerated() {
                if number > 0 { body.append(UInt8(ascii: ",")) }
                if let content = stored.contents[hit.post.id] {
                    let highlights = Highlights(
                        title: hit.post.title.split(matched: matched, table: tokens),
                        content: hit.post.content.excerptWords(matched: matched, table: tokens))
                    hit.post.listed.write(
                        author: hit.author, comments: hit.comments, likes: hit.post.likes, content: content,
                        contentHtml: stored.html[hit.post.id], highlights: highlights, to: &body)
                } else if let result = moved[hit.post.id] {
                    var json = JSONWriter(capacity: 8192)
                    result.write(to: &json)
                    body.append(contentsOf: json.bytes)
                }
            }
        }
        body.append(UInt8(ascii: "]"))
        // Nor are they counted.
        return SearchPage(ids: listed.map(\.post.id), total: found.total - (found.hits.count - listed.count), body: body)
    }

    /// The hits' contents (their `"content":...` fields) and, when asked for, their
    /// `contentHtml`, which the index does not keep: from `contents`, or (all of them when
    /// `contentHtml` is asked for) in one statement by their ids, the contents then kept in
    /// `contents` for the next searches. A post gone since it was found has neither; one whose
    /// version moved since (`moved`) neither, as the index's title and excerpt are of the
    /// version before.
    func contents(
        of hits: [IndexHit], includeHTML: Bool
    ) async throws -> (contents: [String: [UInt8]], html: [String: String], moved: [String]) {
        var found: [String: [UInt8]] = [:]
        if !includeHTML {
            for hit in hits {
                found[hit.post.id] = contents.content(of: ContentCache.Key(postId: hit.post.id, version: hit.post.listed.version))
            }
        }
        let missing = hits.filter { found[$0.post.id] == nil }
        guard !missing.isEmpty else { return (found, [:], []) }
        let listedVersions = Dictionary(uniqueKeysWithValues: missing.map { ($0.post.id, $0.post.listed.version) })
        var html: [String: String] = [:]
        var moved: [String] = []
        let rows = try await database.query(
            """
            SELECT id, (post->>'version')::bigint AS version, post->>'content' AS content,
                CASE WHEN \(includeHTML) THEN post->>'contentHtml' END AS html
            FROM documents WHERE id = ANY(\(missing.map(\.post.id))) AND post IS NOT NULL
            """)
        for row in rows {
            let id: String = try row.decode("id")
            let version: Int = try row.decode("version")
            let content: String = try row.decode("content")
            var json = JSONWriter(capacity: content.utf8.count + 16)
            json.field("content", content)
            contents.insert(json.bytes, for: ContentCache.Key(postId: id, version: version))
            guard version == listedVersions[id] else {
                moved.append(id)
                continue
            }
            found[id] = json.bytes
            html[id] = try row.decode("html", as: String?.self)
        }
        return (found, html, moved)
    }

    /// The query's words, folded as the lexicon's are, in order, each with its stems: split and
    /// stemmed here when the text is plain (`QueryText`), the stems the lexicon keeps for a
    /// word it has; else by PostgreSQL, as the texts were.
    func words(of text: String) async throws -> [ParsedWord] {
        guard let words = QueryText.words(text) else { return try await parsedByPostgreSQL(text) }
        return words.map { ParsedWord(word: $0, stems: index.lexicon.stems(of: $0) ?? EnglishStemmer.lexemes(of: $0)) }
    }

    func parsedByPostgreSQL(_ text: String) async throws -> [ParsedWord] {
        try await database.query(Self.words(of: text)).map { ParsedWord(word: try $0.decode("word"), stems: try $0.decode("stems")) }
    }

    /// The words of `text` as the texts were split (`search_tokens`: a hyphenated word is its
    /// parts, a host name, an address or a path with a hyphen one word), each once, in order,
    /// folded (`word`) and stemmed (`stems`). A filter on the words' text dropped a host like
    /// `my-site.com` with `up-to-date`, and such a query found nothing.
    static func words(of text: String) -> SQL {
        """
        SELECT w.word, tsvector_to_array(to_tsvector('search_english', w.word)) AS stems
        FROM (
            SELECT (tsvector_to_array(to_tsvector('search_words', t.token)))[1] AS word, min(t.position) AS first
            FROM unnest(search_tokens(\(text))) WITH ORDINALITY AS t(token, position)
            WHERE t.position % 2 = 0
            GROUP BY 1
        ) AS w
        WHERE w.word IS NOT NULL
        ORDER BY w.first
        """
    }
}
