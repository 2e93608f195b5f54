import Foundation
internal import CCmark

/// CommonMark with GitHub's extensions, rendered by cmark-gfm: HTML that is safe for any page
/// and the plain text of the same document.
///
/// Raw HTML in the Markdown is never passed through (cmark replaces it with a comment), and
/// every link and image whose URL is not relative, `http`, `https` or `mailto` loses its URL
/// before rendering. Text is always escaped, so what is left holds no script, style, frame,
/// event attribute or dangerous URL.
public enum Markdown {
    public struct Rendering: Sendable, Hashable {
        /// The HTML body.
        public var html: String
        /// The text of the document, blocks separated by a space, white space collapsed.
        public var text: String
    }

    /// Names what renders: cmark-gfm's version and this wrapper's own rules (bump `rules` when
    /// the options, the extensions or the URL filter change). Stored beside rendered HTML, it
    /// tells which posts a new renderer must render again.
    public static let renderer: String = {
        let rules = 3
        return "cmark-gfm \(String(cString: cmark_version_string())); postly rules \(rules)"
    }()

    static let extensionNames = ["table", "strikethrough", "autolink", "tasklist", "tagfilter"]
    static let allowedSchemes: Set<String> = ["http", "https", "mailto"]

    /// Registers the GFM extensions once: cmark's registration is not thread-safe, a
    /// Swift `static let` is initialised exactly once.
    private static let registered: Void = cmark_gfm_core_extensions_ensure_registered()

    public static func render(_ markdown: String) -> Rendering {
        _ = registered
        let options = CMARK_OPT_DEFAULT
        guard let parser = cmark_parser_new(options) else { preconditionFailure("cmark_parser_new: out of memory") }
        defer { cmark_parser_free(parser) }
        // Within the bounds of `MarkdownBounds.swift`, where cmark-gfm 0.29's work and output
        // grow faster than the document.
        let tables = tableCells(markdown) <= tableCellLimit
        for name in extensionNames where tables || name != "table" {
            guard let syntax = cmark_find_syntax_extension(name) else { preconditionFailure("cmark-gfm has no \(name) extension") }
            cmark_parser_attach_syntax_extension(parser, syntax)
        }
        var source = boundingNesting(boundingBrackets(boundingReferenceCopies(markdown)))
        source.withUTF8 { bytes in
            bytes.withMemoryRebound(to: CChar.self) { cmark_parser_feed(parser, $0.baseAddress, $0.count) }
        }
        guard let document = cmark_parser_finish(parser) else { preconditionFailure("cmark_parser_finish: out of memory") }
        defer { cmark_node_free(document) }

        let text = removeUnsafeURLs(andCollectTextOf: document)
        guard let rendered = cmark_render_html(document, options, cmark_parser_get_syntax_extensions(parser)) else {
            preconditionFailure("cmark_render_html: out of memory")
        }
        defer { free(rendered) }
        return Rendering(html: String(cString: rendered), text: text)
    }

    /// One walk of the tree: empties unsafe link and image URLs, and gathers the text.
    private static func removeUnsafeURLs(andCollectTextOf document: OpaquePointer) -> String {
        guard let iterator = cmark_iter_new(document) else { preconditionFailure("cmark_iter_new: out of memory") }
        defer { cmark_iter_free(iterator) }
        var text = ""
        while case let event = cmark_iter_next(iterator), event != CMARK_EVENT_DONE {
            guard let node = cmark_iter_get_node(iterator) else { continue }
            if postly_cmark_is_block(node) != 0 {
                text += " "
            }
            guard event == CMARK_EVENT_ENTER else { continue }
            switch cmark_node_get_type(node) {
            case CMARK_NODE_LINK, CMARK_NODE_IMAGE:
                if let url = cmark_node_get_url(node), !isSafeURL(String(cString: url)) {
                    cmark_node_set_url(node, "")
                }
            case CMARK_NODE_TEXT, CMARK_NODE_CODE, CMARK_NODE_CODE_BLOCK:
                if let literal = cmark_node_get_literal(node) { text += String(cString: literal) }
            case CMARK_NODE_SOFTBREAK, CMARK_NODE_LINEBREAK:
                text += " "
            default:
                break
            }
        }
        return PlainText.words(in: text).joined(separator: " ")
    }

    /// Relative URLs and absolute ones with an allowed scheme. Control characters and white
    /// space are ignored the way browsers ignore them (`java\tscript:`); a `/`, `?` or `#`
    /// before the first `:` makes it a path, not a scheme.
    static func isSafeURL(_ url: String) -> Bool {
        let compact = String(String.UnicodeScalarView(url.unicodeScalars.filter { $0.value > 0x20 && $0.value != 0x7F }))
        guard let colon = compact.firstIndex(of: ":") else { return true }
        let beforeColon = compact[..<colon]
        if beforeColon.contains(where: { $0 == "/" || $0 == "?" || $0 == "#" }) { return true }
        return allowedSchemes.contains(beforeColon.lowercased())
    }
}
