/// A limit on a text field in characters (what a person counts) and in UTF-8 bytes (what
/// storage, tokens and headers carry): one character may be a cluster of many code points,
/// so a limit in characters alone lets a "one-character" title weigh 40 KB.
public struct TextLimit: Sendable {
    public let characters: Int
    public let bytes: Int

    /// `bytes` defaults to four per character, what the longest single code point takes.
    public init(characters: Int, bytes: Int? = nil) {
        self.characters = characters
        self.bytes = bytes ?? 4 * characters
    }

    /// The field error of a text holding a NUL, which PostgreSQL cannot store (and bcrypt
    /// would stop at, in a password).
    public static let nulCharacters = "must not contain NUL characters"

    /// What is wrong with `text`, as a field error; nil when it fits.
    public func problem(with text: String) -> String? {
        if text.utf8.contains(0) { return Self.nulCharacters }
        if text.count > characters { return "must be at most \(characters) characters" }
        if text.utf8.count > bytes { return "must be at most \(bytes) bytes" }
        return nil
    }

    /// Whether `text` shows a reader nothing: only whitespace and characters drawn as nothing
    /// (zero-width spaces and joiners, the byte-order mark, fillers: Unicode's default-ignorable
    /// code points). Such a title, name or comment is refused as empty.
    public static func isBlank(_ text: String) -> Bool {
        text.unicodeScalars.allSatisfy { $0.properties.isWhitespace || $0.properties.isDefaultIgnorableCodePoint }
    }

    /// The longest prefix of whole characters that fits.
    public func truncated(_ text: String) -> String {
        var kept = Substring(text.prefix(characters))
        while kept.utf8.count > bytes { kept = kept.dropLast() }
        return String(kept)
    }
}
