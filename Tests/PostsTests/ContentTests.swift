import Foundation
import PostlyModels
@testable import PostsService
import Testing

/// Slugs, reading time, rendering and the sanitizer, as pure functions.
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
        #expect(PostRendering(markdown: "a < b & **c**").excerpt == "a < b & c")
    }

    static let xssCorpus = [
        "<script>alert(1)</script>",
        "<SCRIPT SRC=//evil.test/x.js></SCRIPT>",
        "<img src=x onerror=alert(1)>",
        "<img src=\"javascript:alert(1)\">",
        "[click](javascript:alert(1))",
        "[click](JaVaScRiPt:alert(1))",
        "[click](java\tscript:alert(1))",
        "<a href=\"jav&#x61;script:alert(1)\">x</a>",
        "<a href=\"&#106;&#97;&#118;&#97;&#115;&#99;&#114;&#105;&#112;&#116;&#58;alert(1)\">x</a>",
        "<a href='data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg=='>x</a>",
        "![x](data:image/svg+xml;base64,PHN2Zz4=)",
        "<iframe src=\"https://evil.test\"></iframe>",
        "<style>body{display:none}</style>",
        "<svg onload=alert(1)><script>alert(1)</script></svg>",
        "<scr<script>ipt>alert(1)</scr</script>ipt>",
        "<div onmouseover=\"alert(1)\">hover</div>",
        "<p style=\"background:url(javascript:alert(1))\">x</p>",
        "<<script>script>alert(1)<</script>/script>",
        "<img src=x onerror=alert(1)//",
        "<a href=\"https://ok.test\" onclick=\"alert(1)\">ok</a>",
        "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>",
        "<object data=\"javascript:alert(1)\"></object><embed src=\"javascript:alert(1)\">",
        "<form action=\"javascript:alert(1)\"><button>x</button></form>",
        "<!--<script>alert(1)</script>-->",
        "<a href=\" javascript:alert(1)\">x</a>",
        "<img/src=x/onerror=alert(1)>",
        "<body onload=alert(1)>",
        "`<script>alert(1)</script>`",
    ]

    @Test(arguments: xssCorpus)
    func nothingExecutableSurvivesInContentHtml(markdown: String) {
        let html = PostRendering(markdown: markdown).html
        // Text is escaped, so every `<` left in the output opens a real tag.
        for tag in Self.tags(in: html.lowercased()) {
            let name = tag.prefix { $0.isLetter || $0.isNumber || $0 == "/" }.replacingOccurrences(of: "/", with: "")
            #expect(HTMLSanitizer.allowedTags.contains(name), "tag \(tag)")
            for forbidden in ["javascript:", "data:", "vbscript:", "style=", " on"] {
                #expect(!tag.contains(forbidden), "\(forbidden) in <\(tag)>")
            }
        }
    }

    /// The insides of the tags of `html`.
    static func tags(in html: String) -> [String] {
        var tags: [String] = []
        var current: String?
        for character in html {
            if character == "<" { current = "" } else if character == ">" {
                if let tag = current { tags.append(tag) }
                current = nil
            } else { current?.append(character) }
        }
        return tags
    }

    @Test func safeMarkdownKeepsItsFormatting() {
        let html = PostRendering(markdown: "# Hi\n\n**b** *i* [link](https://a.test/x?y=1&z=2) ![alt](https://img.test/a.png)\n\n```swift\nlet a = 1 < 2\n```").html
        #expect(html.contains("<h1>Hi</h1>"))
        #expect(html.contains("<strong>b</strong>"))
        #expect(html.contains("<a href=\"https://a.test/x?y=1&amp;z=2\""))
        #expect(html.contains("<img src=\"https://img.test/a.png\" alt=\"alt\">"))
        #expect(html.contains("1 &lt; 2"))
    }

    @Test func malformedAndNestedTagsComeOutBalanced() {
        #expect(HTMLSanitizer.sanitize("<p><strong>open") == "<p><strong>open</strong></p>")
        #expect(HTMLSanitizer.sanitize("<em><strong>x</em>y") == "<em><strong>x</strong></em>y")
        #expect(HTMLSanitizer.sanitize("</p>text") == "text")
        #expect(HTMLSanitizer.sanitize("a < b") == "a &lt; b")
        #expect(HTMLSanitizer.sanitize("x<img src=x onerror=alert(1)") == "x")
    }
}
