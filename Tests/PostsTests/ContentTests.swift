import Foundation
import PostlyModels
@testable import PostsService
import Testing

/// Slugs, reading time and rendering, as pure functions (the renderer's own tests are in
/// PostlyMarkdownTests).
@Suite struct ContentTests {
    @Test func slugFoldsDiacriticsAndCollapsesOtherCharacters() {
        #expect(Slug.make(from: "Crème brûlée") == "creme-brulee")
        #expect(Slug.make(from: "  Hello,   World!! ") == "hello-world")
        #expect(Slug.make(from: "Straße & Smørrebrød") == "strasse-smorrebrod")
        #expect(Slug.make(from: "🎉🎉") == "")
        #expect(Slug.make(from: "Swift 6.3") == "swift-6-3")
    }

    @Test func slugOfA300CharacterTitleIsAtMost80() {
        let slug = Slug.make(from: String(repeating: "word ", count: 60))
        #expect(slug.count <= 80)
        #expect(!slug.hasSuffix("-"))
        #expect(Slug.candidate(String(repeating: "a", count: 80), attempt: 12).count == 80)
        #expect(Slug.candidate(String(repeating: "a", count: 80), attempt: 12).hasSuffix("-12"))
    }

    @Test(arguments: [(1, 1), (199, 1), (200, 1), (300, 2), (500, 2), (700, 4), (1000, 5)])
    func readTimeRoundsHalfToEven(words: Int, minutes: Int) {
        let content = Array(repeating: "word", count: words).joined(separator: words % 2 == 0 ? " " : "\n")
        #expect(ReadTime.minutes(for: content) == minutes)
    }

    @Test func excerptIsPlainTextOfAtMost200Characters() {
        let long = PostRendering(markdown: "# Title\n\n" + String(repeating: "lorem ipsum ", count: 100))
        #expect(long.excerpt.count <= 200)
        #expect(!long.excerpt.contains("<"))
        #expect(long.excerpt.hasPrefix("Title lorem ipsum"))
        // Cut after a whole word, as many as fit before the `…`.
        let cut = long.excerpt.dropLast()
        #expect(long.excerpt.hasSuffix("…") && long.text!.hasPrefix(cut + " ") && cut.count + " lorem".count > 199)
        #expect(PostRendering(markdown: String(repeating: "x", count: 300)).excerpt == String(repeating: "x", count: 199) + "…")
        #expect(PostRendering(markdown: "a < b & **c**").excerpt == "a < b & c")
    }

    @Test func hostileInputIsDroppedAndTheRestOfThePostRenders() {
        let rendering = PostRendering(markdown: "Intro paragraph.\n\n<script>alert(1)</script>\n\n<img src=x onerror=alert(1)>\n\nOutro **bold**.")
        #expect(!rendering.html.contains("<script") && !rendering.html.contains("<img") && !rendering.html.contains("onerror"))
        #expect(rendering.html.hasSuffix("<p>Outro <strong>bold</strong>.</p>\n"))
        #expect(rendering.excerpt == "Intro paragraph. Outro bold.")
    }

    @Test func safeMarkdownKeepsItsFormatting() {
        let html = PostRendering(markdown: "# Hi\n\n**b** *i* [link](https://a.test/x?y=1&z=2) ![alt](https://img.test/a.png)\n\n```swift\nlet a = 1 < 2\n```").html
        #expect(html.contains("<h1>Hi</h1>"))
        #expect(html.contains("<strong>b</strong>"))
        #expect(html.contains("<a href=\"https://a.test/x?y=1&amp;z=2\""))
        #expect(html.contains("<img src=\"https://img.test/a.png\" alt=\"alt\" />"))
        #expect(html.contains("<code class=\"language-swift\">let a = 1 &lt; 2"))
    }
}
