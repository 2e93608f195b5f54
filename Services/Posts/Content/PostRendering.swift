import Ink

/// What is derived from a post's Markdown: sanitized HTML, a plain-text excerpt and the
/// reading time. Computed once per write and stored, so reads never render.
public struct PostRendering: Sendable, Hashable {
    public static let excerptLength = 200

    public var html: String
    public var excerpt: String
    public var readTime: Int

    public init(html: String, excerpt: String, readTime: Int) {
        self.html = html
        self.excerpt = excerpt
        self.readTime = readTime
    }

    public init(markdown: String) {
        let html = HTMLSanitizer.sanitize(MarkdownParser().html(from: markdown))
        self.html = html
        self.excerpt = Self.excerpt(ofHTML: html)
        self.readTime = ReadTime.minutes(for: markdown)
    }

    /// Block elements become a space, white space collapses, and the text is cut at a word
    /// boundary with `…` when longer than 200 characters.
    static func excerpt(ofHTML html: String) -> String {
        let blocks: Set<String> = ["p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "blockquote", "ul", "ol", "li", "table", "tr", "th", "td", "img"]
        var text = ""
        for token in HTMLTokenizer.tokens(html) {
            switch token {
            case .text(let value): text += value
            case .startTag(let name, _, _), .endTag(let name): if blocks.contains(name) { text += " " }
            }
        }
        let words = text.split(whereSeparator: \.isWhitespace)
        let collapsed = words.joined(separator: " ")
        guard collapsed.count > excerptLength else { return collapsed }
        var cut = ""
        for word in words {
            let next = cut.isEmpty ? String(word) : cut + " " + word
            if next.count > excerptLength - 1 { break }
            cut = next
        }
        if cut.isEmpty { cut = String(collapsed.prefix(excerptLength - 1)) }
        return cut + "…"
    }
}
