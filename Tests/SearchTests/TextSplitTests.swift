import PostlyPostgres
import Testing
import TestSupport

@testable import SearchService

/// The indexer splits plain texts itself; its tokens, lexemes and lexicon words must be what
/// PostgreSQL's `search_tokens`, `search_lexemes` and `search_words` make of them (the oracle
/// and the queries PostgreSQL splits rely on it); and what is not plain is left to PostgreSQL.
@Suite struct TextSplitTests {
    @Test func plainTextIsSplitAsPostgreSQLSplitsIt() async throws {
        try await QueryTextTests.withSearchDatabase { database in
            var random = SplitMix(seed: 23)
            let accented = Array(QueryText.folded.keys.compactMap(Unicode.Scalar.init).map(Character.init))
            let separators = Array(" \t\n!\"#$%'()*+,-:;=@[\\]^_`{|}.?")
            let words = ["kayaks", "the", "Running", "naïve", "café", "river's", "2026", "7", "x"]
            let texts = (0..<10_000).map { _ in
                String((0..<Int.random(in: 0...40, using: &random)).map { _ in
                    switch Int.random(in: 0..<12, using: &random) {
                    case 0...4: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ".randomElement(using: &random)!
                    case 5: accented.randomElement(using: &random)!
                    case 6: "0123456789".randomElement(using: &random)!
                    case 7: " "
                    default: separators.randomElement(using: &random)!
                    }
                }) + " " + words.shuffled(using: &random).prefix(Int.random(in: 0...4, using: &random)).joined(separator: " ")
            }
            let rows = try await database.query(
                """
                SELECT t.i, search_tokens(t.text) AS tokens, search_lexemes(search_tokens(t.text)) AS lexemes,
                       array(SELECT w FROM unnest(tsvector_to_array(to_tsvector('search_words', t.text))) AS w
                             WHERE w ~ '^[[:alpha:]]{2,40}$') AS words
                FROM unnest(\(texts)::text[]) WITH ORDINALITY AS t(text, i) ORDER BY t.i
                """)
            var split = 0
            for (text, row) in zip(texts, rows) {
                guard let mine = TextSplit(text) else { continue }
                split += 1
                #expect(mine.tokens == (try row.decode("tokens", as: [String].self)), "\(text.debugDescription)")
                #expect(mine.lexemes == (try row.decode("lexemes", as: [String].self)), "\(text.debugDescription)")
                #expect(Set(mine.lexiconWords) == Set(try row.decode("words", as: [String].self)), "\(text.debugDescription)")
            }
            #expect(split > texts.count / 4, "\(split) of \(texts.count) split in Swift")
        }
    }

    @Test func textThatIsNotPlainIsLeftToPostgreSQL() {
        for text in ["3.5 kayaks", "example.com", "a/b", "x &amp; y", "<b>bold</b>", "C~D", "日本語", "kayak ×2", "abc123", "-5", "v2", "a.. b"] {
            #expect(TextSplit(text) == nil, "\(text)")
        }
        #expect(TextSplit("Crème, 2 naïve-cafés. Why?")?.tokens == ["", "Crème", ", ", "2", " ", "naïve", "-", "cafés", ". ", "Why", "?"])
        #expect(TextSplit("")?.tokens == [])
    }
}
