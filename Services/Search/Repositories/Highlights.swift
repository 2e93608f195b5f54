/// A result's title and excerpt with the matched words marked: plain text, HTML-escaped, the
/// matches wrapped in `<mark>...</mark>`.
struct Highlights: Codable, Sendable, Hashable {
    var title: String
    var excerpt: String

    /// What PostgreSQL's `ts_headline` is told to put around a match: characters of Unicode's
    /// private use area, removed from every stored text (`storable`) so none is ever mistaken.
    static let start: Unicode.Scalar = "\u{E000}"
    static let stop: Unicode.Scalar = "\u{E001}"
    static let headlineOptions = "StartSel=\u{E000}, StopSel=\u{E001}"

    /// `text` without the two markers.
    static func storable(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { $0 == start || $0 == stop }) else { return text }
        return String(String.UnicodeScalarView(text.unicodeScalars.filter { $0 != start && $0 != stop }))
    }

    /// A headline from `ts_headline` made safe for HTML, its markers become `<mark>` elements.
    static func marked(_ headline: String) -> String {
        var html = ""
        var isOpen = false
        for scalar in headline.unicodeScalars {
            switch scalar {
            case start where !isOpen: html += "<mark>"; isOpen = true
            case stop where isOpen: html += "</mark>"; isOpen = false
            case start, stop: continue
            case "&": html += "&amp;"
            case "<": html += "&lt;"
            case ">": html += "&gt;"
            case "\"": html += "&quot;"
            case "'": html += "&#39;"
            default: html.unicodeScalars.append(scalar)
            }
        }
        if isOpen { html += "</mark>" }
        return html
    }
}
