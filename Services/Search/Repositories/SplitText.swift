/// A text split into words and what is between them (spaces, punctuation, tags), each word with
/// its lexeme as the index stems it: what `search_tokens` and `search_lexemes` store for every
/// title and content, so a search marks its results' matches without parsing their texts.
struct SplitText: Sendable, Hashable {
    struct Token: Sendable, Hashable {
        var text: String
        /// A word, not what is between words.
        var isWord: Bool
        /// A word whose lexeme the search looked for.
        var isMatch = false
    }

    var tokens: [Token]

    init(_ tokens: some Collection<Token>) {
        self.tokens = Array(tokens)
    }

    /// - Parameters:
    ///   - tokens: as stored, or a slice of them: what is between words and words alternating,
    ///     starting with what is between.
    ///   - lexemes: each word's lexeme, in order ("" for a stop word, which is never a match).
    ///   - matched: the lexemes the search looked for.
    init(tokens: [String], lexemes: [String], matched: Set<String>) {
        self.tokens = tokens.enumerated().map { index, text in
            guard index % 2 == 1 else { return Token(text: text, isWord: false) }
            let word = index / 2
            let lexeme = word < lexemes.count ? lexemes[word] : ""
            return Token(text: text, isWord: true, isMatch: !lexeme.isEmpty && matched.contains(lexeme))
        }
    }

    /// The text as HTML: escaped, each match in a `<mark>`. Written byte by byte: what is
    /// escaped is ASCII, so it never splits a character.
    func html() -> String {
        var html: [UInt8] = []
        html.reserveCapacity(tokens.reduce(0) { $0 + $1.text.utf8.count } + 64)
        for token in tokens {
            let isMatch = token.isMatch
            if isMatch { html.append(contentsOf: "<mark>".utf8) }
            for byte in token.text.utf8 {
                switch byte {
                case UInt8(ascii: "&"): html.append(contentsOf: "&amp;".utf8)
                case UInt8(ascii: "<"): html.append(contentsOf: "&lt;".utf8)
                case UInt8(ascii: ">"): html.append(contentsOf: "&gt;".utf8)
                case UInt8(ascii: "\""): html.append(contentsOf: "&quot;".utf8)
                case UInt8(ascii: "'"): html.append(contentsOf: "&#39;".utf8)
                default: html.append(byte)
                }
            }
            if isMatch { html.append(contentsOf: "</mark>".utf8) }
        }
        return String(decoding: html, as: UTF8.self)
    }
}
