import Synchronization

/// The index's distinct words in memory, shared by the searches (which read a snapshot) and
/// `LexiconRefresher`, its only writer.
final class Lexicon: Sendable {
    private struct State {
        var words = LexiconWords()
        /// The highest `lexicon.added` loaded.
        var loadedUpTo: Int64 = 0
    }

    private let state = Mutex(State())

    var words: LexiconWords { state.withLock { $0.words } }
    var loadedUpTo: Int64 { state.withLock { $0.loadedUpTo } }

    /// Adds words stored up to `added`; the merge happens outside the lock.
    func add(_ newWords: [String], upTo added: Int64) {
        var words = self.words
        words.insert(newWords)
        state.withLock { state in
            state.words = words
            state.loadedUpTo = max(state.loadedUpTo, added)
        }
    }

    /// Replaces everything (the periodic full load, which also picks up words whose
    /// transactions committed after a later one's).
    func replace(with words: LexiconWords, upTo added: Int64) {
        state.withLock { state in
            state.words = words
            state.loadedUpTo = max(state.loadedUpTo, added)
        }
    }
}
