/// A title or content split in the service, as `search_tokens` and `search_lexemes` split it in
/// PostgreSQL, for the texts where that is plain (`QueryText`'s letters and separators, and
/// also whole numbers standing apart and a `.` or `?` not followed by a letter or digit):
/// each text is split once, here, when the indexer stores it. Anything else (numbers joined to
/// letters or points, hosts, paths, entities, tags, other scripts) is left to PostgreSQL's
/// trigger. `TextSplitTests` holds both to the same split.
struct TextSplit: Sendable, Equatable {
    /// What is between words and words, alternating, starting with what is between (none for
    /// an empty text).
    var tokens: [String]
    /// Each word's lexeme, "" for a stop word.
    var lexemes: [String]
    /// The words the lexicon takes (folded, not stemmed, letters only, 2 to 40 of them).
    var lexiconWords: [String]

    /// Words longer than this many bytes are left to PostgreSQL (which does not index a word of
    /// 2 KB or more).
    private static let longestWord = 256

    init?(_ text: String) {
        var tokens: [String] = []
        var lexemes: [String] = []
        var lexiconWords: [String] = []
        let scalars = Array(text.unicodeScalars)
        var between = String.UnicodeScalarView()
        var index = 0
        while index < scalars.count {
            let scalar = scalars[index]
            if Self.isLetter(scalar) || Self.isDigit(scalar) {
                let digits = Self.isDigit(scalar)
                // A number signed or joined to a point, or letters and digits together, are
                // PostgreSQL's own tokens.
                if digits, let last = between.last, "+-.,/:".unicodeScalars.contains(last) { return nil }
                var end = index
                var word = String.UnicodeScalarView()
                var folded = ""
                while end < scalars.count {
                    let next = scalars[end]
                    if digits ? Self.isDigit(next) : Self.isLetter(next) {
                        word.append(next)
                        if !digits { folded += Self.fold(next) }
                        end += 1
                    } else if digits ? Self.isLetter(next) : Self.isDigit(next) {
                        return nil
                    } else {
                        break
                    }
                }
                if digits, end < scalars.count, ".,:/".unicodeScalars.contains(scalars[end]) { return nil }
                let token = String(word)
                guard token.utf8.count <= Self.longestWord else { return nil }
                tokens.append(String(between))
                tokens.append(token)
                between = String.UnicodeScalarView()
                if digits {
                    lexemes.append(token)
                } else {
                    lexemes.append(EnglishStemmer.lexemes(of: folded).first ?? "")
                    let length = folded.unicodeScalars.count
                    if length >= 2 && length <= 40 { lexiconWords.append(folded) }
                }
                index = end
                continue
            }
            switch scalar {
            case ".", "?":
                // Before a letter, a digit or what a file name holds, a point makes a host, a
                // file or a number.
                if index + 1 < scalars.count {
                    let next = scalars[index + 1]
                    if Self.isLetter(next) || Self.isDigit(next) || "._-~/".unicodeScalars.contains(next) { return nil }
                }
            default:
                guard Self.separators.contains(scalar.value) else { return nil }
            }
            between.append(scalar)
            index += 1
        }
        if !tokens.isEmpty || !between.isEmpty { tokens.append(String(between)) }
        self.tokens = tokens
        self.lexemes = lexemes
        self.lexiconWords = lexiconWords
    }

    private static let separators = Set(" \t\n\r!\"#$%'()*+,-:;=@[\\]^_`{|}".unicodeScalars.map(\.value))

    private static func isDigit(_ scalar: Unicode.Scalar) -> Bool { ("0"..."9").contains(scalar) }

    private static func isLetter(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x61...0x7A, 0x41...0x5A: true
        case 0x80...: QueryText.folded[scalar.value] != nil
        default: false
        }
    }

    /// A letter as `unaccent` then lower case make it.
    private static func fold(_ scalar: Unicode.Scalar) -> String {
        switch scalar.value {
        case 0x41...0x5A: String(Unicode.Scalar(scalar.value + 0x20)!)
        case 0x80...: QueryText.folded[scalar.value]!
        default: String(scalar)
        }
    }
}
