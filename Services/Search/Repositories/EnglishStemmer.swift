import Synchronization

/// The lexemes PostgreSQL's `english_stem` dictionary gives a word: none for a stop word, else
/// the Snowball English (Porter2) stem. For the words of a query the lexicon does not have (the
/// lexicon keeps each word's stems as PostgreSQL made them); `EnglishStemmerTests` holds it to
/// PostgreSQL. Words are folded and lower case, letters only (so the apostrophe rules are left
/// out).
enum EnglishStemmer {
    static func lexemes(of word: String) -> [String] {
        if let known = remembered.withLock({ $0[word] }) { return known }
        let lexemes = stopWords.contains(word) ? [] : [stem(word)]
        remembered.withLock { remembered in
            if remembered.count >= rememberedWords { remembered.removeAll(keepingCapacity: true) }
            remembered[word] = lexemes
        }
        return lexemes
    }

    /// The lexemes of the words seen last, so each is stemmed about once: a few thousand words
    /// make up most of any text, and stemming was most of the cost of indexing a post.
    /// Emptied when full (a few MB at most).
    private static let remembered = Mutex<[String: [String]]>([:])
    private static let rememberedWords = 50_000

    static func stem(_ word: String) -> String {
        if let exception = exceptions[word] { return exception }
        var stemmer = Stemmer(word)
        guard stemmer.letters.count > 2 else { return word }
        stemmer.run()
        return stemmer.result
    }

    /// PostgreSQL's `english.stop`.
    static let stopWords: Set<String> = [
        "i", "me", "my", "myself", "we", "our", "ours", "ourselves", "you", "your", "yours", "yourself", "yourselves", "he", "him",
        "his", "himself", "she", "her", "hers", "herself", "it", "its", "itself", "they", "them", "their", "theirs", "themselves",
        "what", "which", "who", "whom", "this", "that", "these", "those", "am", "is", "are", "was", "were", "be", "been", "being",
        "have", "has", "had", "having", "do", "does", "did", "doing", "a", "an", "the", "and", "but", "if", "or", "because", "as",
        "until", "while", "of", "at", "by", "for", "with", "about", "against", "between", "into", "through", "during", "before",
        "after", "above", "below", "to", "from", "up", "down", "in", "out", "on", "off", "over", "under", "again", "further", "then",
        "once", "here", "there", "when", "where", "why", "how", "all", "any", "both", "each", "few", "more", "most", "other", "some",
        "such", "no", "nor", "not", "only", "own", "same", "so", "than", "too", "very", "s", "t", "can", "will", "just", "don",
        "should", "now",
    ]

    /// Porter2's first exceptions: whole words.
    private static let exceptions: [String: String] = [
        "skis": "ski", "skies": "sky", "dying": "die", "lying": "lie", "tying": "tie", "idly": "idl", "gently": "gentl",
        "ugly": "ugli", "early": "earli", "only": "onli", "singly": "singl", "sky": "sky", "news": "news", "howe": "howe",
        "atlas": "atlas", "cosmos": "cosmos", "bias": "bias", "andes": "andes",
    ]

    /// Words after step 1a that are left as they are.
    private static let invariant: Set<String> = ["inning", "outing", "canning", "herring", "earring", "proceed", "exceed", "succeed"]

    /// The algorithm on the word's letters (Unicode scalars; `Y` marks a `y` that is a consonant).
    private struct Stemmer {
        var letters: [Unicode.Scalar]
        /// Where the regions R1 and R2 begin.
        var r1 = 0, r2 = 0

        init(_ word: String) { letters = Array(word.unicodeScalars) }

        var result: String { String(String.UnicodeScalarView(letters)) }

        static func isVowel(_ letter: Unicode.Scalar) -> Bool { "aeiouy".unicodeScalars.contains(letter) }

        func isVowel(at index: Int) -> Bool { Self.isVowel(letters[index]) }

        func ends(with suffix: String) -> Bool {
            let suffix = Array(suffix.unicodeScalars)
            return letters.count >= suffix.count && Array(letters.suffix(suffix.count)) == suffix
        }

        /// The longest of `suffixes` the word ends with.
        func longest(_ suffixes: [String]) -> String? {
            suffixes.filter(ends(with:)).max { $0.unicodeScalars.count < $1.unicodeScalars.count }
        }

        mutating func replace(_ suffix: String, with replacement: String) {
            letters.removeLast(suffix.unicodeScalars.count)
            letters.append(contentsOf: replacement.unicodeScalars)
        }

        func start(of suffix: String) -> Int { letters.count - suffix.unicodeScalars.count }

        /// Whether the word ends in a short syllable: a non-vowel, a vowel, a non-vowel other
        /// than w, x or Y; or a vowel and a non-vowel that begin the word.
        func endsShort() -> Bool {
            let n = letters.count
            guard n >= 2, !isVowel(at: n - 1), isVowel(at: n - 2) else { return false }
            if n == 2 { return true }
            let last = letters[n - 1]
            return !isVowel(at: n - 3) && last != "w" && last != "x" && last != "Y"
        }

        mutating func run() {
            // Prelude: a y that begins the word or follows a vowel is a consonant.
            if letters[0] == "y" { letters[0] = "Y" }
            for index in letters.indices.dropFirst() where letters[index] == "y" && isVowel(at: index - 1) { letters[index] = "Y" }
            markRegions()
            step1a()
            if EnglishStemmer.invariant.contains(result) { return finish() }
            step1b()
            step1c()
            step2()
            step3()
            step4()
            step5()
            finish()
        }

        mutating func finish() {
            letters = letters.map { $0 == "Y" ? "y" : $0 }
        }

        /// R1 begins after the first non-vowel that follows a vowel; R2 likewise within R1.
        mutating func markRegions() {
            func regionStart(from start: Int) -> Int {
                var index = start
                while index < letters.count, !isVowel(at: index) { index += 1 }
                while index < letters.count, isVowel(at: index) { index += 1 }
                return min(index + 1, letters.count)
            }
            let word = result
            if let prefix = ["gener", "commun", "arsen"].first(where: { word.hasPrefix($0) }) {
                r1 = prefix.unicodeScalars.count
            } else {
                r1 = regionStart(from: 0)
            }
            r2 = regionStart(from: r1)
        }

        mutating func step1a() {
            guard let suffix = longest(["sses", "ied", "ies", "s", "us", "ss"]) else { return }
            switch suffix {
            case "sses": replace(suffix, with: "ss")
            case "ied", "ies": replace(suffix, with: start(of: suffix) > 1 ? "i" : "ie")
            case "s":
                // Deleted when a vowel comes before the letter before it.
                if letters.dropLast(2).contains(where: Self.isVowel) { letters.removeLast() }
            default: break
            }
        }

        mutating func step1b() {
            guard let suffix = longest(["eed", "eedly", "ed", "edly", "ing", "ingly"]) else { return }
            if suffix == "eed" || suffix == "eedly" {
                if start(of: suffix) >= r1 { replace(suffix, with: "ee") }
                return
            }
            guard letters[..<start(of: suffix)].contains(where: Self.isVowel) else { return }
            replace(suffix, with: "")
            if ends(with: "at") || ends(with: "bl") || ends(with: "iz") {
                letters.append("e")
            } else if let last = letters.last, letters.count >= 2, letters[letters.count - 2] == last,
                "bdfgmnprt".unicodeScalars.contains(last)
            {
                letters.removeLast()
            } else if r1 >= letters.count, endsShort() {
                letters.append("e")
            }
        }

        mutating func step1c() {
            let n = letters.count
            guard n > 2, letters[n - 1] == "y" || letters[n - 1] == "Y", !isVowel(at: n - 2) else { return }
            letters[n - 1] = "i"
        }

        mutating func step2() {
            let rules: [String: String] = [
                "tional": "tion", "enci": "ence", "anci": "ance", "abli": "able", "entli": "ent", "izer": "ize", "ization": "ize",
                "ational": "ate", "ation": "ate", "ator": "ate", "alism": "al", "aliti": "al", "alli": "al", "fulness": "ful",
                "ousli": "ous", "ousness": "ous", "iveness": "ive", "iviti": "ive", "biliti": "ble", "bli": "ble", "ogi": "og",
                "fulli": "ful", "lessli": "less", "li": "",
            ]
            guard let suffix = longest(Array(rules.keys)), start(of: suffix) >= r1 else { return }
            let before = start(of: suffix) > 0 ? letters[start(of: suffix) - 1] : nil
            if suffix == "ogi", before != "l" { return }
            if suffix == "li", !(before.map { "cdeghkmnrt".unicodeScalars.contains($0) } ?? false) { return }
            replace(suffix, with: rules[suffix]!)
        }

        mutating func step3() {
            let rules: [String: String] = [
                "tional": "tion", "ational": "ate", "alize": "al", "icate": "ic", "iciti": "ic", "ical": "ic", "ful": "", "ness": "",
                "ative": "",
            ]
            guard let suffix = longest(Array(rules.keys)), start(of: suffix) >= r1 else { return }
            if suffix == "ative", start(of: suffix) < r2 { return }
            replace(suffix, with: rules[suffix]!)
        }

        mutating func step4() {
            let suffixes = [
                "al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent", "ism", "ate", "iti", "ous", "ive",
                "ize", "ion",
            ]
            guard let suffix = longest(suffixes), start(of: suffix) >= r2 else { return }
            if suffix == "ion" {
                let at = start(of: suffix)
                guard at > 0, letters[at - 1] == "s" || letters[at - 1] == "t" else { return }
            }
            replace(suffix, with: "")
        }

        mutating func step5() {
            guard let last = letters.last else { return }
            let at = letters.count - 1
            if last == "e" {
                if at >= r2 || (at >= r1 && !Self(dropping: self).endsShort()) { letters.removeLast() }
            } else if last == "l", at >= r2, at > 0, letters[at - 1] == "l" {
                letters.removeLast()
            }
        }

        /// The word without its last letter, for the short-syllable test before it.
        init(dropping stemmer: Stemmer) {
            letters = Array(stemmer.letters.dropLast())
        }
    }
}
