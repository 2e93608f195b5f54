/// Keeps only allow-listed HTML: the tags Markdown produces, a few attributes each, and
/// URLs with a safe scheme. Everything else goes; the elements that carry code or hide
/// content (`script`, `style`, `iframe`, ...) go with all they contain. The output is
/// re-serialized from tokens, so what survives is always well-formed and balanced.
public enum HTMLSanitizer {
    static let allowedTags: Set<String> = [
        "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "strong", "b", "em", "i", "del", "s", "u",
        "code", "pre", "blockquote", "ul", "ol", "li", "a", "img", "table", "thead", "tbody", "tr", "th", "td",
        "sup", "sub",
    ]
    static let voidTags: Set<String> = ["br", "hr", "img"]
    /// Dropped together with their content.
    static let droppedWithContent: Set<String> = [
        "script", "style", "iframe", "object", "embed", "noscript", "template", "textarea", "title", "svg", "math",
        "xmp", "noembed", "noframes", "frameset", "frame", "select", "applet", "head", "plaintext",
    ]
    static let allowedAttributes: [String: Set<String>] = [
        "a": ["href", "title"],
        "img": ["src", "alt", "title"],
        "code": ["class"],
        "ol": ["start"],
        "th": ["align"],
        "td": ["align"],
    ]
    static let urlAttributes: Set<String> = ["href", "src"]
    static let allowedSchemes: Set<String> = ["http", "https", "mailto"]

    public static func sanitize(_ html: String) -> String {
        var output = ""
        var open: [String] = []
        var dropping: String?
        for token in HTMLTokenizer.tokens(html) {
            if let dropped = dropping {
                if case .endTag(let name) = token, name == dropped { dropping = nil }
                continue
            }
            switch token {
            case .text(let text):
                output += CharacterReferences.escape(text)
            case .startTag(let name, let attributes, let selfClosing):
                if droppedWithContent.contains(name) {
                    if !selfClosing { dropping = name }
                    continue
                }
                guard allowedTags.contains(name) else { continue }
                output += "<" + name
                for attribute in attributes where allowedAttributes[name]?.contains(attribute.name) == true {
                    if urlAttributes.contains(attribute.name), !isSafeURL(attribute.value) { continue }
                    if attribute.name == "class", !isLanguageClass(attribute.value) { continue }
                    output += " \(attribute.name)=\"\(CharacterReferences.escape(attribute.value))\""
                }
                if name == "a" { output += " rel=\"nofollow noopener noreferrer\"" }
                output += ">"
                if !voidTags.contains(name) { open.append(name) }
            case .endTag(let name):
                guard allowedTags.contains(name), !voidTags.contains(name), let position = open.lastIndex(of: name) else { continue }
                // Closes what was left open inside it, as a browser would.
                for inner in open[position...].reversed() { output += "</\(inner)>" }
                open.removeSubrange(position...)
            }
        }
        for name in open.reversed() { output += "</\(name)>" }
        return output
    }

    /// Relative URLs and absolute ones with an allowed scheme. Control characters and white
    /// space are ignored the way browsers ignore them (`java\tscript:`).
    static func isSafeURL(_ value: String) -> Bool {
        let compact = String(String.UnicodeScalarView(value.unicodeScalars.filter { $0.value > 0x20 && $0.value != 0x7F }))
        guard let colon = compact.firstIndex(of: ":") else { return true }
        let beforeColon = compact[..<colon]
        // A `/`, `?` or `#` before the first `:` makes it a path, not a scheme.
        if beforeColon.contains(where: { $0 == "/" || $0 == "?" || $0 == "#" }) { return true }
        return allowedSchemes.contains(beforeColon.lowercased())
    }

    /// Ink marks fenced code with `class="language-swift"`; nothing else needs a class.
    static func isLanguageClass(_ value: String) -> Bool {
        value.hasPrefix("language-") && value.dropFirst(9).allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "+" || $0 == "#") }
    }
}
