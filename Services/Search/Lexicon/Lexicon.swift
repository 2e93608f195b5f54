import Synchronization

/// The index's distinct words in memory, with their stems, shared by the searches (which read a
/// snapshot) and `IndexFollower`, its only writer. The typos and completions of each searched
/// word are remembered until the words change: searches repeat their words, and a walk for two
/// typos visits much of the lexicon.
final class Lexicon: Sendable {
    private enum Lookup: Hashable {
        case corrections(String, maxEdits: Int, limit: Int)
        case completions(String, limit: Int)
    }

    private struct State {
        var words = LexiconWords()
        /// Each word's lexemes as the index stems it (none for a stop word).
        var stems: [String: [String]] = [:]
        /// Counts the changes of `words`: a lookup is remembered only for the words it read.
        var generation = 0
        /// The highest `lexicon.added` loaded.
        var loadedUpTo: Int64 = 0
        var remembered: [Lookup: [String]] = [:]

        mutating func set(_ newWords: LexiconWords, upTo added: Int64) {
            words = newWords
            generation += 1
            loadedUpTo = max(loadedUpTo, added)
            remembered.removeAll()
        }
    }

    /// The most lookups remembered; all are forgotten when it is reached.
    static let rememberedLimit = 10_000

    private let state = Mutex(State())

    private var words: LexiconWords { state.withLock { $0.words } }
    var loadedUpTo: Int64 { state.withLock { $0.loadedUpTo } }

    /// `LexiconWords.corrections(of:maxEdits:limit:)` of the current words.
    func corrections(of word: String, maxEdits: Int, limit: Int) -> [String] {
        lookUp(.corrections(word, maxEdits: maxEdits, limit: limit)) { $0.corrections(of: word, maxEdits: maxEdits, limit: limit) }
    }

    /// `LexiconWords.completions(of:limit:)` of the current words.
    func completions(of prefix: String, limit: Int) -> [String] {
        lookUp(.completions(prefix, limit: limit)) { $0.completions(of: prefix, limit: limit) }
    }

    /// The lexemes of `word`, a word of the lexicon; nil for a word it does not have.
    func stems(of word: String) -> [String]? {
        state.withLock { $0.stems[word] }
    }

    /// Adds words stored up to `added`, each with its stems; the merge happens outside the lock.
    /// Only one writer calls this.
    func add(_ newWords: [(word: String, stems: [String])], upTo added: Int64) {
        guard !newWords.isEmpty else { return }
        var words = self.words
        words.insert(newWords.map(\.word))
        state.withLock { state in
            for (word, stems) in newWords { state.stems[word] = stems }
            state.set(words, upTo: added)
        }
    }

    /// Replaces everything (the load).
    func replace(with newWords: [(word: String, stems: [String])], upTo added: Int64) {
        let words = LexiconWords(newWords.map(\.word))
        let stems = Dictionary(newWords.map { ($0.word, $0.stems) }, uniquingKeysWith: { _, last in last })
        state.withLock { state in
            state.stems = stems
            state.loadedUpTo = 0
            state.set(words, upTo: added)
        }
    }

    /// The remembered answer, else `find` on a snapshot of the words, outside the lock.
    private func lookUp(_ lookup: Lookup, _ find: (LexiconWords) -> [String]) -> [String] {
        let (words, generation, remembered) = state.withLock { ($0.words, $0.generation, $0.remembered[lookup]) }
        if let remembered { return remembered }
        let found = find(words)
        state.withLock { state in
            guard state.generation == generation else { return }
            if state.remembered.count >= Self.rememberedLimit { state.remembered.removeAll() }
            state.remembered[lookup] = found
        }
        return found
    }
}
