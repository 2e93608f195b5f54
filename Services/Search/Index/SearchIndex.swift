import PostlyModels
import Synchronization

/// The search index in memory, which every search reads and only `IndexFollower` changes:
/// loaded whole from the service's tables at start, then kept with the change log. Until it is
/// loaded, searches answer 503 and `/health/ready` names it.
final class SearchIndex: Sendable {
    /// The words typos and prefixes are looked up among, changed in the same step as the
    /// posts (just before them, so a typo finds a post no later than its exact word).
    let lexicon = Lexicon()
    /// What this instance's consumer stored, for the follower to apply without reading it back.
    let stored = StoredPosts()
    private let state = ReadWriteLock<IndexState?>(nil)
    private let loads = Atomic(0)

    struct NotLoaded: Error {}

    var isLoaded: Bool { state.read { $0 != nil } }

    /// The last position of the change log applied; nil before the load.
    var position: Int64? { state.read { $0?.position } }

    var postCount: Int { state.read { $0?.postCount ?? 0 } }

    /// The tables the loaded index numbers its texts with; nil before the load.
    var tables: IndexTables? { state.read { $0?.tables } }

    /// The loads since the start (`IndexFollower` says when it loads again).
    var loadCount: Int { loads.load(ordering: .relaxed) }

    /// Replaces everything (a load).
    func replace(with newState: IndexState) {
        loads.add(1, ordering: .relaxed)
        let old = state.write { state in
            let old = state
            state = newState
            return old
        }
        _ = old  // released here, outside the lock
    }

    /// Changes the loaded index; nothing before it is loaded.
    func update(_ body: (inout IndexState) -> Void) {
        state.write { state in
            guard state != nil else { return }
            body(&state!)
        }
    }

    /// See `IndexState.search(_:offset:limit:)`, for the words `query` numbers with the index's
    /// lexemes; with the tokens its hits' texts are read with. Both are of one index: a load
    /// replaces them.
    func search(
        offset: Int, limit: Int, _ query: (LexemeTable) -> [WordQuery]
    ) throws -> (total: Int, hits: [IndexHit], tokens: TokenTable) {
        try state.read { state in
            guard let state else { throw NotLoaded() }
            let found = state.search(query(state.tables.lexemes), offset: offset, limit: limit)
            return (found.total, found.hits, state.tables.tokens)
        }
    }
}
