import Synchronization

/// Every distinct token of the indexed texts (a word, or what is between two words), numbered
/// once for the index's life (`IndexTables`) with the lexeme it stems to, so a text is kept as
/// a short run of numbers instead of its bytes and its words' lexemes: a few thousand distinct
/// tokens make up most of any text. Shared by the index's writer, which adds tokens, and the
/// searches, which read the texts of their results.
final class TokenTable: Sendable {
    /// What the tokens are read with. It only grows, so a reader takes it as it is at one
    /// instant (its arrays shared, not copied) and reads without holding the writer up; the
    /// writer's next addition copies the arrays if a reader still has them.
    struct Tokens: Sendable {
        /// Every token's bytes, one after another; token `n` is `bytes[ends[n - 1]..<ends[n]]`.
        fileprivate var bytes: [UInt8] = []
        fileprivate var ends: [UInt32] = []
        /// The lexeme of each token (`LexemeTable.none` for a stop word or what is between words).
        fileprivate var lexemes: [UInt32] = []

        func lexeme(_ token: UInt32) -> UInt32 { lexemes[Int(token)] }

        /// Calls `body` with the bytes of `token`.
        func withBytes<R>(of token: UInt32, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
            let start = token == 0 ? 0 : Int(ends[Int(token) - 1]), end = Int(ends[Int(token)])
            return bytes.withUnsafeBufferPointer { body(UnsafeBufferPointer(rebasing: $0[start..<end])) }
        }

        func append(_ token: UInt32, to out: inout [UInt8]) {
            withBytes(of: token) { out.append(contentsOf: $0) }
        }
    }

    private struct Table {
        var ids: [String: UInt32] = [:]
        var tokens = Tokens()
    }

    private let table = Mutex(Table())

    /// The numbers of `tokens` (what is between words and words alternating, starting with
    /// what is between), numbering the new ones; `lexemes` are the words' lexemes, in order.
    func number(_ texts: some Sequence<some StringProtocol>, lexemes: [UInt32]) -> [UInt32] {
        table.withLock { table in
            var numbers: [UInt32] = []
            for (index, text) in texts.enumerated() {
                let isWord = index % 2 == 1
                let key = String(text)
                if let id = table.ids[key] {
                    // The same bytes stem the same way; what is between words has no lexeme.
                    if isWord, index / 2 < lexemes.count, table.tokens.lexemes[Int(id)] == LexemeTable.none {
                        table.tokens.lexemes[Int(id)] = lexemes[index / 2]
                    }
                    numbers.append(id)
                    continue
                }
                let id = UInt32(table.tokens.ends.count)
                table.ids[key] = id
                table.tokens.bytes.append(contentsOf: key.utf8)
                table.tokens.ends.append(UInt32(table.tokens.bytes.count))
                table.tokens.lexemes.append(isWord && index / 2 < lexemes.count ? lexemes[index / 2] : LexemeTable.none)
                numbers.append(id)
            }
            return numbers
        }
    }

    /// Reads the tokens as they are now, without holding the writer up.
    func read<R>(_ body: (Tokens) -> R) -> R {
        body(table.withLock { $0.tokens })
    }

    /// Tokens and the bytes they hold, for the memory estimate.
    var size: (count: Int, bytes: Int) { table.withLock { ($0.tokens.ends.count, $0.tokens.bytes.count) } }
}
