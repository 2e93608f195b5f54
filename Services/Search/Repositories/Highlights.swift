/// A result's title and excerpt with the matched words marked: plain text, HTML-escaped, the
/// matches wrapped in `<mark>...</mark>`.
struct Highlights: Codable, Sendable, Hashable {
    var title: String
    var excerpt: String
}

extension Highlights {
    /// The whole title, and the excerpt of the content `ts_headline` would show, the matches
    /// marked.
    /// - Parameter content: the content, or the part of it around its first match (all the
    ///   excerpt can show; see `SplitText.wordsBeforeMatch`).
    init(title: SplitText, content: SplitText) {
        self.init(title: title.html(), excerpt: content.excerpt().html())
    }
}
