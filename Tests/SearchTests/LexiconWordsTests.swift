import Testing

@testable import SearchService

/// The in-memory lexicon finds the words within the contract's typos, swaps included, and
/// the words a prefix begins.
@Suite struct LexiconWordsTests {
    let lexicon = LexiconWords(["garden", "garten", "gardens", "warden", "photograph", "photography", "micro", "microservices", "microscope", "time", "tame"])

    @Test func correctionsWithinOneTypo() {
        #expect(Set(lexicon.corrections(of: "garden", maxEdits: 1)) == ["garden", "garten", "gardens", "warden"])
        #expect(lexicon.corrections(of: "gadren", maxEdits: 1) == ["garden"])
        #expect(lexicon.corrections(of: "gardne", maxEdits: 1) == ["garden"])
        #expect(lexicon.corrections(of: "xyzzy", maxEdits: 1).isEmpty)
    }

    @Test func correctionsWithinTwoTypos() {
        #expect(Set(lexicon.corrections(of: "pohtogreph", maxEdits: 2)) == ["photograph"])
        #expect(Set(lexicon.corrections(of: "photograpyh", maxEdits: 2)) == ["photograph", "photography"])
    }

    @Test func noTyposMeansExactOnly() {
        #expect(lexicon.corrections(of: "tame", maxEdits: 0) == ["tame"])
        #expect(lexicon.corrections(of: "tome", maxEdits: 0).isEmpty)
    }

    @Test func completionsAreTheLongerWordsShortestFirst() {
        #expect(lexicon.completions(of: "micro", limit: 10) == ["microscope", "microservices"])
        #expect(lexicon.completions(of: "micros", limit: 1) == ["microscope"])
        #expect(lexicon.completions(of: "zz", limit: 10).isEmpty)
    }

    @Test func insertingKeepsTheWordsSortedAndUnique() {
        var words = LexiconWords(["b", "d"])
        words.insert(["c", "a", "d", "e"])
        #expect(words.count == 5)
        #expect(words.corrections(of: "c", maxEdits: 0) == ["c"])
        #expect(words.completions(of: "", limit: 10) == ["a", "b", "c", "d", "e"])
    }

    @Test func theTypoRuleCountsLetters() {
        #expect(QueryPlan.allowedTypos(forLength: 4) == 0)
        #expect(QueryPlan.allowedTypos(forLength: 5) == 1)
        #expect(QueryPlan.allowedTypos(forLength: 8) == 1)
        #expect(QueryPlan.allowedTypos(forLength: 9) == 2)
    }
}
