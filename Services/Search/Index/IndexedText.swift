import BitCollections

/// A title or a content as the index keeps it for highlights and answers: split as
/// `search_tokens` splits it (what is between words and words, alternating, starting with what
/// is between), each token by its number in the `TokenTable` (which knows its bytes and its
/// lexeme), the numbers written as variable-length integers (7 bits a byte, the last byte of
/// each below 128): one to three bytes a token instead of its bytes and 4 bytes a word.
struct IndexedText: Sendable, Equatable {
    private var codes: [UInt8]
    private(set) var wordCount: Int

    /// - Parameter tokens: the tokens' numbers, what is between words and words alternating.
    init(tokens: [UInt32]) {
        var codes: [UInt8] = []
        codes.reserveCapacity(tokens.count * 2)
        for var token in tokens {
            while token >= 0x80 {
                codes.append(UInt8(truncatingIfNeeded: token) | 0x80)
                token >>= 7
            }
            codes.append(UInt8(token))
        }
        // Exactly as long as it needs: the index keeps many.
        self.codes = Array(unsafeUninitializedCapacity: codes.count) { buffer, count in
            count = buffer.initialize(fromContentsOf: codes)
        }
        wordCount = tokens.count / 2
    }

    /// The tokens' numbers in order.
    var tokens: Tokens { Tokens(codes: codes) }

    struct Tokens: Sequence, IteratorProtocol {
        fileprivate let codes: [UInt8]
        fileprivate var index = 0

        mutating func next() -> UInt32? {
            guard index < codes.count else { return nil }
            var token: UInt32 = 0, shift: UInt32 = 0
            while true {
                let byte = codes[index]
                index += 1
                token |= UInt32(byte & 0x7F) << shift
                if byte < 0x80 { return token }
                shift += 7
            }
        }
    }

    /// Each word's lexeme, in order (`LexemeTable.none` for a stop word).
    func lexemes(in table: TokenTable.Tokens) -> [UInt32] {
        var lexemes: [UInt32] = []
        lexemes.reserveCapacity(wordCount)
        for (index, token) in tokens.enumerated() where index % 2 == 1 { lexemes.append(table.lexeme(token)) }
        return lexemes
    }

    /// The text: its tokens' bytes one after another.
    func text(in table: TokenTable.Tokens) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(codes.count * 4)
        for token in tokens { table.append(token, to: &bytes) }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The first word whose lexeme is one of `matched`.
    func firstWord(in matched: BitSet, table: TokenTable.Tokens) -> Int? {
        for (index, token) in tokens.enumerated() where index % 2 == 1 && matched.contains(Int(table.lexeme(token))) { return index / 2 }
        return nil
    }

    /// The words `words` (clipped to the text), with what is between them, before the first and
    /// after the last; the words whose lexeme is one of `matched` marked.
    func split(words: ClosedRange<Int>, matched: BitSet, table: TokenTable.Tokens) -> SplitText {
        let firstToken = 2 * words.lowerBound, lastToken = 2 * words.upperBound + 2
        var split: [SplitText.Token] = []
        split.reserveCapacity(min(lastToken - firstToken + 1, 2 * wordCount + 1))
        for (index, token) in tokens.enumerated() {
            if index > lastToken { break }
            guard index >= firstToken else { continue }
            let text = table.withBytes(of: token) { String(decoding: $0, as: UTF8.self) }
            if index % 2 == 1 {
                split.append(SplitText.Token(text: text, isWord: true, isMatch: matched.contains(Int(table.lexeme(token)))))
            } else {
                split.append(SplitText.Token(text: text, isWord: false))
            }
        }
        return SplitText(split)
    }

    /// All of it.
    func split(matched: BitSet, table: TokenTable.Tokens) -> SplitText {
        split(words: 0...max(0, wordCount - 1), matched: matched, table: table)
    }

    /// What the excerpt can show, as `PostgresSearchRepository` reads it: from
    /// `SplitText.wordsBeforeMatch` words before the first match to `wordsAfterMatch` after it,
    /// or the first `excerptMinWords` words when nothing matched.
    func excerptWords(matched: BitSet, table: TokenTable.Tokens) -> SplitText {
        guard let first = firstWord(in: matched, table: table) else {
            return split(words: 0...(SplitText.excerptMinWords - 1), matched: matched, table: table)
        }
        return split(words: max(0, first - SplitText.wordsBeforeMatch)...(first + SplitText.wordsAfterMatch), matched: matched, table: table)
    }

    /// The bytes kept, for the memory estimate.
    var size: Int { codes.count }
}
