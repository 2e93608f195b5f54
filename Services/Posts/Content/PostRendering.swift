import PostlyMarkdown

/// What is derived from a post's Markdown: sanitized HTML, a plain-text excerpt and the
/// reading time. Computed once per write and stored, so reads never render.
public struct PostRendering: Sendable, Hashable {
    public static let excerptLength = 200

    public var html: String
    public var excerpt: String
    public var readTime: Int
    /// The plain text, which events carry for search; nil when this was not rendered here.
    public var text: String?

    public init(html: String, excerpt: String, readTime: Int) {
        self.html = html
        self.excerpt = excerpt
        self.readTime = readTime
    }

    public init(markdown: String) {
        let rendering = Markdown.render(markdown)
        self.html = rendering.html
        self.excerpt = Self.excerpt(of: rendering.text)
        self.readTime = ReadTime.minutes(for: markdown)
        self.text = rendering.text
    }

    /// The text cut at a word boundary with `…` when longer than 200 characters. Only its
    /// first words are looked at (and each counted once): a post's text runs to thousands.
    static func excerpt(of text: String) -> String {
        guard let limit = text.index(text.startIndex, offsetBy: excerptLength, limitedBy: text.endIndex), limit < text.endIndex else {
            return text
        }
        var cut = ""
        var cutLength = 0
        // At most 100 words fit, each a character and a space; the 101st piece is the rest.
        for word in text.split(separator: " ", maxSplits: excerptLength / 2) {
            let length = cut.isEmpty ? word.count : cutLength + 1 + word.count
            if length > excerptLength - 1 { break }
            cut += cut.isEmpty ? word : " " + word
            cutLength = length
        }
        if cut.isEmpty { cut = String(text.prefix(excerptLength - 1)) }
        return cut + "…"
    }
}
