import PostlyMarkdown
import Testing

/// Not an assertion: how long rendering a 600-word post takes, printed for the README
/// (the hand-written renderer it replaced took about 125 ms in a debug build).
@Suite struct RenderTimingTests {
    /// Headings, paragraphs with emphasis and links, a list, a quote and code, 600 words.
    static func samplePost() -> String {
        var parts: [String] = []
        let sentence = "Swift makes **server** code *pleasant* to write, with [structured concurrency](https://swift.org/documentation) and `async` functions everywhere"
        for section in 1...5 {
            parts.append("## Section \(section)")
            for _ in 0..<3 { parts.append(sentence + ". " + sentence + ".") }
            parts.append("- first point about `Task`\n- second point with ~~old~~ new\n- third point")
            parts.append("> A quote that says something wise.")
            parts.append("```swift\nlet answer = await compute()\nprint(answer)\n```")
        }
        parts.append("The end of the post, with a few words more to make it six hundred in all, and a final [link](https://example.com).")
        return parts.joined(separator: "\n\n")
    }

    @Test func timesTheRenderOfA600WordPost() {
        let post = Self.samplePost()
        _ = Markdown.render(post)
        let rounds = 50
        let elapsed = ContinuousClock().measure {
            for _ in 0..<rounds { _ = Markdown.render(post) }
        }
        let words = post.split(whereSeparator: \.isWhitespace).count
        print("cmark-gfm render of a \(words)-word post: \(elapsed / rounds) per post")
        #expect(Markdown.render(post).html.contains("<h2>Section 5</h2>"))
    }
}
