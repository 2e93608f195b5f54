import Synchronization

/// Numbers each lexeme the index has seen, once for the index's life (`IndexTables`), so
/// postings and texts hold 4-byte numbers instead of strings. Shared by the index's writer,
/// which adds lexemes, and the searches, which only look them up.
final class LexemeTable: Sendable {
    /// A word without a lexeme (a stop word).
    static let none = UInt32.max

    private let ids = Mutex<[String: UInt32]>([:])

    /// The numbers of `lexemes`, numbering the new ones; "" is `none`.
    func number(_ lexemes: some Sequence<some StringProtocol>) -> [UInt32] {
        ids.withLock { ids in
            lexemes.map { lexeme in
                guard !lexeme.isEmpty else { return Self.none }
                let key = String(lexeme)
                if let id = ids[key] { return id }
                let id = UInt32(ids.count)
                ids[key] = id
                return id
            }
        }
    }

    /// The numbers of those of `lexemes` that have one: a lexeme never numbered is in no post.
    func existing(_ lexemes: some Sequence<String>) -> [UInt32] {
        ids.withLock { ids in lexemes.compactMap { ids[$0] } }
    }

    var count: Int { ids.withLock { $0.count } }
}
