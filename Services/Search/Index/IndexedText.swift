/// A title or a content as the index keeps it for highlights: split as `search_tokens` splits
/// it (what is between words and words, alternating), each word with its lexeme's number.
/// Compact: the tokens' bytes one after another, each followed by a 0 byte (PostgreSQL's text
/// never holds one), and 4 bytes a word.
struct IndexedText: Sendable {
    private var bytes: [UInt8]
    /// Each word's lexeme (`LexemeTable.none` for a stop word).
    private(set) var lexemes: [UInt32]

    /// U+E000 in UTF-8: what separates the tokens that `IndexRows` reads (`search_tokens` keeps
    /// it out of every token).
    static let separator: [UInt8] = [0xEE, 0x80, 0x80]

    /// - Parameters:
    ///   - joinedTokens: the tokens separated by `separator` ("" for none).
    ///   - lexemes: the lexeme of each word, in order.
    init(joinedTokens: some Collection<UInt8>, lexemes: [UInt32]) {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(joinedTokens.count + 2 * lexemes.count + 2)
        let source = Array(joinedTokens)
        var index = 0
        while index < source.count {
            if source[index] == 0xEE, index + 2 < source.count, source[index + 1] == 0x80, source[index + 2] == 0x80 {
                bytes.append(0)
                index += 3
            } else {
                bytes.append(source[index])
                index += 1
            }
        }
        if !source.isEmpty { bytes.append(0) }
        self.bytes = bytes
        self.lexemes = lexemes
    }

    var wordCount: Int { lexemes.count }

    /// The number of words of tokens joined by `separator`: each word has a token before and after it.
    static func wordCount(joinedTokens: [UInt8]) -> Int {
        var separators = 0
        for index in joinedTokens.indices.dropLast(2)
        where joinedTokens[index] == 0xEE && joinedTokens[index + 1] == 0x80 && joinedTokens[index + 2] == 0x80 {
            separators += 1
        }
        return separators / 2
    }

    /// The first word whose lexeme is one of `matched`.
    func firstWord(in matched: Set<UInt32>) -> Int? {
        lexemes.firstIndex { matched.contains($0) }
    }

    /// The words `words` (clipped to the text), with what is between them, before the first and
    /// after the last; the words whose lexeme is one of `matched` marked.
    func split(words: ClosedRange<Int>, matched: Set<UInt32>) -> SplitText {
        let firstToken = 2 * words.lowerBound, lastToken = 2 * words.upperBound + 2
        var tokens: [SplitText.Token] = []
        tokens.reserveCapacity(min(lastToken - firstToken + 1, 2 * lexemes.count + 1))
        bytes.withUnsafeBufferPointer { bytes in
            var token = 0, start = 0
            for index in bytes.indices where bytes[index] == 0 {
                if token >= firstToken {
                    let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
                    if token % 2 == 1 {
                        let word = token / 2
                        tokens.append(SplitText.Token(text: text, isWord: true, isMatch: word < lexemes.count && matched.contains(lexemes[word])))
                    } else {
                        tokens.append(SplitText.Token(text: text, isWord: false))
                    }
                }
                token += 1
                start = index + 1
                if token > lastToken { break }
            }
        }
        return SplitText(tokens)
    }

    /// All of it.
    func split(matched: Set<UInt32>) -> SplitText {
        split(words: 0...max(0, lexemes.count - 1), matched: matched)
    }

    /// What the excerpt can show, as `PostgresSearchRepository` reads it: from
    /// `SplitText.wordsBeforeMatch` words before the first match to `wordsAfterMatch` after it,
    /// or the first `excerptMinWords` words when nothing matched.
    func excerptWords(matched: Set<UInt32>) -> SplitText {
        guard let first = firstWord(in: matched) else { return split(words: 0...(SplitText.excerptMinWords - 1), matched: matched) }
        return split(words: max(0, first - SplitText.wordsBeforeMatch)...(first + SplitText.wordsAfterMatch), matched: matched)
    }
}
