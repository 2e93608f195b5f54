import Foundation

/// What each word of a query may match: itself, the index's words within its typos, and for
/// the last word the index's words it begins (the user may still be typing it).
struct QueryPlan: Sendable, Hashable {
    struct Word: Sendable, Hashable {
        var text: String
        /// `text` first, then its corrections and completions.
        var alternatives: [String]
    }

    var words: [Word]

    /// At most this many words count: the first ones and the last, the one being typed; the
    /// rest of a long query's middle is ignored.
    static let maxWords = 10
    static let maxCompletions = 30
    /// The closest corrections only: words crowded with near neighbours (a post can hold
    /// thousands of two-letter variants of one word) made each search merge thousands of
    /// postings, and each remembered lookup hold them all. Far more than a real word has, so
    /// that ties cut off alphabetically drop no ordinary correction.
    static let maxCorrections = 200

    /// The words of a query that count: the first `maxWords - 1` and the last.
    static func counted<Word>(_ words: [Word]) -> [Word] {
        words.count <= maxWords ? words : words.prefix(maxWords - 1) + [words[words.count - 1]]
    }

    /// - Parameter words: the query's words in order, folded as the lexicon's are.
    init(words: [String], lexicon: Lexicon) {
        let words = Self.counted(words)
        self.words = words.enumerated().map { index, word in
            guard Self.isLetters(word) else { return Word(text: word, alternatives: [word]) }
            var alternatives = [word]
            var seen: Set<String> = [word]
            var candidates = lexicon.corrections(
                of: word, maxEdits: Self.allowedTypos(forLength: word.unicodeScalars.count), limit: Self.maxCorrections)
            if index == words.count - 1 {
                candidates += lexicon.completions(of: word, limit: Self.maxCompletions)
            }
            for candidate in candidates where seen.insert(candidate).inserted { alternatives.append(candidate) }
            return Word(text: word, alternatives: alternatives)
        }
    }

    /// The contract's rule: one typo from 5 letters, two from 9, none below.
    static func allowedTypos(forLength length: Int) -> Int {
        length >= 9 ? 2 : length >= 5 ? 1 : 0
    }

    static func isLetters(_ word: String) -> Bool {
        !word.isEmpty && word.unicodeScalars.allSatisfy(CharacterSet.letters.contains)
    }
}
