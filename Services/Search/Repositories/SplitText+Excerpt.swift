/// The excerpt as PostgreSQL's `ts_headline` picks it with `MaxWords=35, MinWords=15,
/// ShortWord=3, MaxFragments=1` (its `mark_hl_fragments`), for a query that is any of the
/// matched lexemes: there every match is a cover of one word, and the first is the best.
extension SplitText {
    static let excerptMaxWords = 35
    static let excerptMinWords = 15
    /// Words this long or shorter (in bytes, as `ts_headline` counts) neither start nor end an
    /// excerpt unless they are matches.
    static let shortWordLength = 3
    /// The most words an excerpt shows before and after its first match: the repository reads
    /// just these of a long content.
    static let wordsBeforeMatch = (excerptMaxWords - 1) / 2
    static let wordsAfterMatch = excerptMaxWords - 1

    /// About 15 to 35 words around the first match, starting and ending at a word that is a
    /// match or longer than a short word; the first 15 words when nothing matched.
    func excerpt() -> SplitText {
        guard let match = tokens.firstIndex(where: \.isMatch) else {
            var end = tokens.startIndex
            var words = 0
            while end < tokens.endIndex, words < Self.excerptMinWords {
                if tokens[end].isWord { words += 1 }
                end += 1
            }
            return SplitText(tokens[..<end])
        }
        func isEndpoint(_ token: Token) -> Bool {
            token.isMatch || (token.isWord && token.text.utf8.count > Self.shortWordLength)
        }
        var words = 1
        // Half the room left before the match, then forward to a word worth starting at.
        var start = match
        var before = 0
        while start > tokens.startIndex, before < Self.wordsBeforeMatch {
            start -= 1
            if tokens[start].isWord { words += 1; before += 1 }
        }
        while start < match, !isEndpoint(tokens[start]) {
            if tokens[start].isWord { words -= 1 }
            start += 1
        }
        // The rest of the room after it, then back to a word worth ending at.
        var end = match
        while end + 1 < tokens.endIndex, words < Self.excerptMaxWords {
            end += 1
            if tokens[end].isWord { words += 1 }
        }
        while end > match, !isEndpoint(tokens[end]) { end -= 1 }
        return SplitText(tokens[start...end])
    }
}
