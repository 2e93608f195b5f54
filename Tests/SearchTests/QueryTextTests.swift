import Foundation
import PostlyPostgres
import Testing
import TestSupport

@testable import SearchService

/// A query is split, folded and stemmed in the service when it is plain text; the words and
/// stems must be PostgreSQL's, which made the index's: each piece held to PostgreSQL on
/// generated texts and words.
@Suite struct QueryTextTests {
    @Test func plainTextIsSplitAndFoldedAsPostgreSQLDoes() async throws {
        try await Self.withSearchDatabase { database in
            var random = SplitMix(seed: 7)
            let accented = Array(QueryText.folded.keys.compactMap(Unicode.Scalar.init).map(Character.init))
            let separators = Array(" \t!\"#$%'()*+,-:;=@[\\]^_`{|}")
            let texts = (0..<3_000).map { _ in
                String((0..<Int.random(in: 1...30, using: &random)).map { _ in
                    switch Int.random(in: 0..<10, using: &random) {
                    case 0...5: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ".randomElement(using: &random)!
                    case 6: accented.randomElement(using: &random)!
                    default: separators.randomElement(using: &random)!
                    }
                })
            }
            let rows = try await database.query(
                """
                SELECT t.i, array(SELECT lexeme FROM unnest(to_tsvector('search_words', t.text)) WHERE lexeme NOT LIKE '%-%'
                                  ORDER BY positions[1]) AS words
                FROM unnest(\(texts)::text[]) WITH ORDINALITY AS t(text, i) ORDER BY t.i
                """)
            for (text, row) in zip(texts, rows) {
                #expect(QueryText.words(text) == (try row.decode("words", as: [String].self)), "\(text.debugDescription)")
            }
        }
    }

    @Test func textThatIsNotPlainIsLeftToPostgreSQL() {
        for text in ["3.5 kayaks", "example.com", "a/b", "x &amp; y", "<b>bold</b>", "C~D", "why?", "日本語", "ŉ", "kayak ×2"] {
            #expect(QueryText.words(text) == nil, "\(text)")
        }
        #expect(QueryText.words("Crème  BRÛLÉE, naïve-café!") == ["creme", "brulee", "naive", "cafe"])
    }

    @Test func eachFoldedLetterIsWhatUnaccentAndLowerCaseMakeIt() async throws {
        try await Self.withSearchDatabase { database in
            let letters = QueryText.folded.keys.sorted().compactMap(Unicode.Scalar.init).map(String.init)
            let rows = try await database.query(
                "SELECT lower(unaccent(l)) AS folded FROM unnest(\(letters)::text[]) WITH ORDINALITY AS t(l, i) ORDER BY i")
            for (letter, row) in zip(letters, rows) {
                #expect(QueryText.folded[letter.unicodeScalars.first!.value] == (try row.decode("folded", as: String.self)), "\(letter)")
            }
        }
    }

    /// Words made to walk every rule: stems of vowels and consonants (y and doubled letters
    /// among them), with one or two of the suffixes the rules look for.
    @Test func wordsAreStemmedAsEnglishStemDoes() async throws {
        try await Self.withSearchDatabase { database in
            var random = SplitMix(seed: 11)
            let suffixes = [
                "", "s", "es", "ss", "us", "sses", "ies", "ied", "ed", "eed", "eedly", "ing", "ingly", "edly", "ly", "ational", "tional",
                "enci", "anci", "abli", "entli", "izer", "ization", "ation", "ator", "alism", "aliti", "alli", "fulness", "ousli",
                "ousness", "iveness", "iviti", "biliti", "bli", "logi", "ogi", "fulli", "lessli", "li", "alize", "icate", "iciti", "ical",
                "ful", "ness", "ative", "al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent", "ism", "ate",
                "iti", "ous", "ive", "ize", "sion", "tion", "ion", "e", "le", "ll", "y", "ay", "ey", "at", "bl", "iz", "bb", "tt",
            ]
            let starts = ["", "", "", "gener", "commun", "arsen", "y", "sky", "news"]
            func syllable() -> String {
                String("bcdfghjklmnprstvwxyz".randomElement(using: &random)!) + String("aeiouy".randomElement(using: &random)!)
                    + (Int.random(in: 0..<2, using: &random) == 0 ? String("bcdfglmnprstwxy".randomElement(using: &random)!) : "")
            }
            var words = Set(SearchOracleTests.vocabulary.filter { $0.allSatisfy(\.isASCII) })
            words.formUnion([
                "skis", "skies", "dying", "lying", "tying", "idly", "gently", "ugly", "early", "only", "singly", "sky", "news", "howe",
                "atlas", "cosmos", "bias", "andes", "inning", "innings", "outing", "canning", "herring", "earring", "proceed", "exceed",
                "succeed", "generously", "communism", "arsenal", "by", "say", "cry", "crying", "hopping", "hoped", "luxuriating",
                "agreed", "feed", "gas", "gaps", "kiwis", "ties", "cries", "this", "yes", "yelling", "player", "ab", "a",
            ])
            for _ in 0..<20_000 {
                let stem = starts.randomElement(using: &random)! + (0..<Int.random(in: 1...3, using: &random)).map { _ in syllable() }.joined()
                let suffix = (0..<Int.random(in: 1...2, using: &random)).map { _ in suffixes.randomElement(using: &random)! }.joined()
                words.insert(stem + suffix)
            }
            let list = words.sorted()
            let rows = try await database.query(
                """
                SELECT tsvector_to_array(to_tsvector('search_english', w)) AS lexemes
                FROM unnest(\(list)::text[]) WITH ORDINALITY AS t(w, i) ORDER BY i
                """)
            var wrong: [String] = []
            for (word, row) in zip(list, rows) where EnglishStemmer.lexemes(of: word) != (try row.decode("lexemes", as: [String].self)) {
                wrong.append("\(word): \(EnglishStemmer.lexemes(of: word)) but \(try row.decode("lexemes", as: [String].self))")
            }
            #expect(wrong.isEmpty, "\(wrong.count) of \(list.count): \(wrong.prefix(30))")
        }
    }

    /// A fresh database with the search service's text search configurations.
    static func withSearchDatabase(_ body: (Database) async throws -> Void) async throws {
        try await TestDatabase.with { database in
            try await schema.apply(to: database)
            try await body(database)
        }
    }
}
