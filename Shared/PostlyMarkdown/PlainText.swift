/// Words of plain text, for reading times and excerpts.
public enum PlainText {
    /// `text` split at white space, exactly as `split(whereSeparator: \.isWhitespace)` splits
    /// it. ASCII text (most posts) is split by its bytes: walking every grapheme cluster of a
    /// post to ask whether it is white space was a sixth of the CPU of creating one.
    public static func words(in text: String) -> [Substring] {
        let utf8 = text.utf8
        guard utf8.allSatisfy({ $0 < 0x80 }) else { return text.split(whereSeparator: \.isWhitespace) }
        var words: [Substring] = []
        var start: String.Index?
        var index = utf8.startIndex
        while index != utf8.endIndex {
            // U+0009...U+000D and the space: ASCII's white space.
            let isWhitespace = utf8[index] == 0x20 || (0x09...0x0D).contains(utf8[index])
            if isWhitespace, let wordStart = start {
                words.append(text[wordStart..<index])
                start = nil
            } else if !isWhitespace, start == nil {
                start = index
            }
            index = utf8.index(after: index)
        }
        if let wordStart = start { words.append(text[wordStart...]) }
        return words
    }
}
