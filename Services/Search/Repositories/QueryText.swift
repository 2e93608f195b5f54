/// A query's words as PostgreSQL's parser and the `search_words` configuration make them, for
/// the texts where that is plain: letters (ASCII, or Latin with accents `unaccent` folds),
/// spaces, and punctuation that only ever separates words. Anything else (digits, `.`, `/`,
/// `&`, `<`, other scripts: URLs, hosts, numbers, entities, tags) is left to PostgreSQL
/// (`MemorySearchRepository.words(of:)`). `QueryTextTests` holds both to the same words.
enum QueryText {
    /// The words of `text`, folded (accents, lower case), each once, in order of first
    /// appearance; nil when PostgreSQL must split it.
    static func words(_ text: String) -> [String]? {
        var words: [String] = []
        var seen: Set<String> = []
        var word = ""
        func endWord() {
            if !word.isEmpty, seen.insert(word).inserted { words.append(word) }
            word = ""
        }
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x61...0x7A:  // a-z
                word.unicodeScalars.append(scalar)
            case 0x41...0x5A:  // A-Z
                word.unicodeScalars.append(Unicode.Scalar(scalar.value + 0x20)!)
            case 0x80...:
                guard let plain = folded[scalar.value] else { return nil }
                word += plain
            default:
                guard separators.contains(scalar.value) else { return nil }
                endWord()
            }
        }
        endWord()
        return words
    }

    /// What separates words wherever it stands (checked against PostgreSQL's parser).
    private static let separators = Set(" \t\n\r!\"#$%'()*+,-:;=@[\\]^_`{|}".unicodeScalars.map(\.value))
}
