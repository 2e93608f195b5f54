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

    /// The trie walk finds exactly the words a plain edit-distance table finds, on many words
    /// and queries of a small alphabet (so most queries have near neighbours).
    @Test func correctionsAgreeWithTheEditDistanceOfEveryWord() {
        var generator = SystemRandomNumberGenerator()
        func randomWord() -> String {
            String((0..<Int.random(in: 1...9, using: &generator)).map { _ in "abcde".randomElement(using: &generator)! })
        }
        let words = Set((0..<3_000).map { _ in randomWord() })
        let lexicon = LexiconWords(words)
        for _ in 0..<300 {
            let query = randomWord()
            for maxEdits in 1...2 {
                let expected = words.filter { Self.editDistance($0, query) <= maxEdits }
                #expect(Set(lexicon.corrections(of: query, maxEdits: maxEdits)) == expected, "\(query), \(maxEdits)")
            }
        }
    }

    /// Optimal string alignment: substitution, insertion, deletion and a swap of neighbours.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a.unicodeScalars), b = Array(b.unicodeScalars)
        var d = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { d[i][0] = i }
        for j in 0...b.count { d[0][j] = j }
        for i in stride(from: 1, through: a.count, by: 1) {
            for j in stride(from: 1, through: b.count, by: 1) {
                d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1) }
            }
        }
        return d[a.count][b.count]
    }

    /// Past the limit, the closest corrections are kept: the word itself, then one typo away,
    /// then two, alphabetically among equals.
    @Test func correctionsPastTheLimitAreTheClosest() {
        let word = "qqqqqqqqq"
        let oneAway = (0..<9).map { String(word.prefix($0)) + "a" + String(word.dropFirst($0 + 1)) }
        let twoAway = (0..<9).flatMap { i in (i + 1..<9).map { j in
            String(word.enumerated().map { $0.offset == i || $0.offset == j ? "b" : $0.element })
        } }
        let lexicon = LexiconWords([word] + oneAway + twoAway)
        #expect(lexicon.corrections(of: word, maxEdits: 2).count == 1 + 9 + 36)
        let closest = lexicon.corrections(of: word, maxEdits: 2, limit: 12)
        #expect(closest == [word] + oneAway.sorted() + twoAway.sorted().prefix(2))
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

    @Test func aRememberedLookupSeesTheWordsAddedAfterIt() {
        let lexicon = Lexicon()
        lexicon.replace(with: [("garden", ["garden"])], upTo: 1)
        #expect(lexicon.corrections(of: "gardem", maxEdits: 1, limit: 30) == ["garden"])
        #expect(lexicon.completions(of: "gar", limit: 5) == ["garden"])
        lexicon.add([("gardel", ["gardel"])], upTo: 2)
        #expect(Set(lexicon.corrections(of: "gardem", maxEdits: 1, limit: 30)) == ["garden", "gardel"])
        #expect(lexicon.completions(of: "gar", limit: 5) == ["gardel", "garden"])
    }

    @Test func theTypoRuleCountsLetters() {
        #expect(QueryPlan.allowedTypos(forLength: 4) == 0)
        #expect(QueryPlan.allowedTypos(forLength: 5) == 1)
        #expect(QueryPlan.allowedTypos(forLength: 8) == 1)
        #expect(QueryPlan.allowedTypos(forLength: 9) == 2)
    }
}
