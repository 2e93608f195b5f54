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

    /// The text cut at a word boundary with `…` when longer than 200 characters.
    static func excerpt(of text: String) -> String {
        guard text.count > excerptLength else { return text }
        var cut = ""
        for word in text.split(separator: " ") {
            let next = cut.isEmpty ? String(word) : cut + " " + word
            if next.count > excerptLength - 1 { break }
            cut = next
        }
        if cut.isEmpty { cut = String(text.prefix(excerptLength - 1)) }
        return cut + "…"
    }
}
