import Foundation

/// The URL name of a post, derived from its title: lower-case ASCII, diacritics folded
/// (`Crème brûlée` -> `creme-brulee`), runs of other characters as one `-`, trimmed, at
/// most 80 characters. Uniqueness is the database's job (`PostgresPostRepository`).
public enum Slug {
    public static let maximumLength = 80

    /// Letters that decomposition does not fold into ASCII.
    private static let foldedLetters: [Character: String] = [
        "ß": "ss", "æ": "ae", "Æ": "ae", "ø": "o", "Ø": "o", "œ": "oe", "Œ": "oe", "đ": "d", "Đ": "d",
        "ł": "l", "Ł": "l", "þ": "th", "Þ": "th", "ð": "d", "Ð": "d", "ı": "i",
    ]

    /// The slug of `title`, empty when it has no usable character.
    public static func make(from title: String) -> String {
        var slug = ""
        var pendingDash = false
        for character in title {
            let folded = foldedLetters[character] ?? String(String.UnicodeScalarView(
                String(character).decomposedStringWithCanonicalMapping.unicodeScalars.filter { !$0.properties.isDiacritic && $0.properties.generalCategory != .nonspacingMark }))
            for scalar in folded.unicodeScalars {
                if scalar.isASCII, scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) {
                    if pendingDash, !slug.isEmpty { slug.append("-") }
                    pendingDash = false
                    slug.unicodeScalars.append(scalar.properties.lowercaseMapping.unicodeScalars.first!)
                } else {
                    pendingDash = true
                }
            }
        }
        return truncated(slug, to: maximumLength)
    }

    /// `base` with the suffix of its `attempt`-th try (`-2`, `-3`, ...), still at most 80 characters.
    public static func candidate(_ base: String, attempt: Int) -> String {
        guard attempt > 1 else { return base }
        let suffix = "-\(attempt)"
        return truncated(base, to: maximumLength - suffix.count) + suffix
    }

    /// Whether `slug` is `base` or one of its suffixed candidates.
    public static func isCandidate(_ slug: String, of base: String) -> Bool {
        if slug == base { return true }
        guard let dash = slug.lastIndex(of: "-"), let attempt = Int(slug[slug.index(after: dash)...]), attempt > 1 else { return false }
        return candidate(base, attempt: attempt) == slug
    }

    private static func truncated(_ slug: String, to length: Int) -> String {
        guard slug.count > length else { return slug }
        var cut = String(slug.prefix(length))
        while cut.hasSuffix("-") { cut.removeLast() }
        return cut
    }
}
