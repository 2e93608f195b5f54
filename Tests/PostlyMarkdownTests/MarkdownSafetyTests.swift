import Foundation
@testable import PostlyMarkdown
import Testing

/// The contract's rules for `contentHtml`: no script, style, frame, `on*` attribute or
/// dangerous URL survives any input, and the Markdown around hostile input still renders.
@Suite struct MarkdownSafetyTests {
    /// Postly's own corpus, kept from the hand-written sanitizer's tests.
    static let postlyCorpus = [
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

    /// The cases of OWASP's XSS filter evasion cheat sheet that Markdown can carry: its HTML
    /// vectors as raw HTML, and its URL tricks inside Markdown links, images, autolinks and
    /// reference definitions.
    static let owaspCorpus = [
        "<SCRIPT SRC=https://cdn.jsdelivr.net/gh/Moksh45/host-xss.rocks/index.js></SCRIPT>",
        "javascript:/*--></title></style></textarea></script></xmp><svg/onload='+/\"`/+/onmouseover=1/+/[*/[]/+alert(42);//'>",
        "<IMG SRC=\"javascript:alert('XSS');\">",
        "<IMG SRC=javascript:alert('XSS')>",
        "<IMG SRC=JaVaScRiPt:alert('XSS')>",
        "<IMG SRC=`javascript:alert(\"RSnake says, 'XSS'\")`>",
        "<a onmouseover=\"alert(document.cookie)\">xxs link</a>",
        "<IMG \"\"\"><SCRIPT>alert(\"XSS\")</SCRIPT>\"\\>",
        "<IMG SRC=# onmouseover=\"alert('xxs')\">",
        "<IMG SRC=/ onerror=\"alert(String.fromCharCode(88,83,83))\"></img>",
        "<img src=x onerror=\"&#0000106&#0000097&#0000118&#0000097&#0000115&#0000099&#0000114&#0000105&#0000112&#0000116&#0000058&#0000097&#0000108&#0000101&#0000114&#0000116&#0000040&#0000039&#0000088&#0000083&#0000083&#0000039&#0000041\">",
        "<IMG SRC=\"jav\tascript:alert('XSS');\">",
        "<IMG SRC=\"jav&#x09;ascript:alert('XSS');\">",
        "<IMG SRC=\" &#14;  javascript:alert('XSS');\">",
        "<SCRIPT/XSS SRC=\"http://xss.rocks/xss.js\"></SCRIPT>",
        "<BODY onload!#$%&()*~+-_.,:;?@[/|\\]^`=alert(\"XSS\")>",
        "<<SCRIPT>alert(\"XSS\");//\\<</SCRIPT>",
        "<SCRIPT SRC=http://xss.rocks/xss.js?< B >",
        "<iframe src=http://xss.rocks/scriptlet.html <",
        "</TITLE><SCRIPT>alert(\"XSS\");</SCRIPT>",
        "<INPUT TYPE=\"IMAGE\" SRC=\"javascript:alert('XSS');\">",
        "<BODY BACKGROUND=\"javascript:alert('XSS')\">",
        "<svg/onload=alert('XSS')>",
        "<LINK REL=\"stylesheet\" HREF=\"javascript:alert('XSS');\">",
        "<STYLE>@import'http://xss.rocks/xss.css';</STYLE>",
        "<META HTTP-EQUIV=\"refresh\" CONTENT=\"0;url=data:text/html base64,PHNjcmlwdD5hbGVydCgnWFNTJyk8L3NjcmlwdD4K\">",
        "<TABLE BACKGROUND=\"javascript:alert('XSS')\">",
        "<DIV STYLE=\"background-image: url(javascript:alert('XSS'))\">",
        "<BASE HREF=\"javascript:alert('XSS');//\">",
        "<OBJECT TYPE=\"text/x-scriptlet\" DATA=\"http://xss.rocks/scriptlet.html\"></OBJECT>",
        "<EMBED SRC=\"data:image/svg+xml;base64,PHN2ZyB4bWxuczpzdmc9Imh0dH A6Ly93d3cudzMub3JnLzIwMDAvc3ZnIiB4bWxucz0iaHR0cDovL3d3dy53My5vcmcv MjAwMC9zdmciIHhtbG5zOnhsaW5rPSJodHRwOi8vd3d3LnczLm9yZy8xOTk5L3hs aW5rIiB2ZXJzaW9uPSIxLjAiIHg9IjAiIHk9IjAiIHdpZHRoPSIxOTQiIGhlaWdodD0iMjAw IiBpZD0ieHNzIj48c2NyaXB0IHR5cGU9InRleHQvZWNtYXNjcmlwdCI+YWxlcnQoIlh TUyIpOzwvc2NyaXB0Pjwvc3ZnPg==\" type=\"image/svg+xml\" AllowScriptAccess=\"always\"></EMBED>",
        "<a href=\"javas&#99;ript:alert(1)\">x</a>",
        // The same tricks as Markdown.
        "[a](javascript:alert('XSS'))",
        "[a](&#106;&#97;&#118;&#97;&#115;&#99;&#114;&#105;&#112;&#116;&#58;alert('XSS'))",
        "[a](&#x6A;&#x61;&#x76;&#x61;&#x73;&#x63;&#x72;&#x69;&#x70;&#x74;&#x3A;alert('XSS'))",
        "[a](&#0000106&#0000097&#0000118&#0000097&#0000115&#0000099&#0000114&#0000105&#0000112&#0000116&#0000058alert('XSS'))",
        "[a](jav&#x09;ascript:alert('XSS'))",
        "[a](jav&#x0A;ascript:alert('XSS'))",
        "[a](jav&#x0D;ascript:alert('XSS'))",
        "[a](<java script:alert('XSS')>)",
        "[a]( &#14;  javascript:alert('XSS'))",
        "[a](vbscript:msgbox(\"XSS\"))",
        "[a](livescript:alert('XSS'))",
        "[a](file:///etc/passwd)",
        "[a](data:text/html;base64,PHNjcmlwdD5hbGVydCgnWFNTJyk8L3NjcmlwdD4K)",
        "![a](javascript:alert('XSS'))",
        "![a](data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==)",
        "![a](DATA:image/gif;base64,R0lGODlhAQABAAAAACw=)",
        "<javascript:alert('XSS')>",
        "<vbscript:msgbox(1)>",
        "[a][x]\n\n[x]: javascript:alert('XSS')",
        "![a][x]\n\n[x]: data:image/svg+xml,<svg/onload=alert(1)>",
        "[a](https://ok.test \"title\\\" onmouseover=\\\"alert(1)\")",
        "[a](https://ok.test\"onmouseover=\"alert(1))",
        "![a\" onerror=\"alert(1)](https://ok.test/a.png)",
        "www.ok.test/\"onmouseover=\"alert(1)",
        "https://ok.test/<script>alert(1)</script>",
        "| a |\n|---|\n| <script>alert(1)</script> |",
        "- [x] <img src=x onerror=alert(1)>",
        "~~<script>alert(1)</script>~~",
        "```\n</code></pre><script>alert(1)</script>\n```",
    ]

    static let allowedTags: Set<String> = [
        "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "strong", "em", "del", "code", "pre", "blockquote",
        "ul", "ol", "li", "a", "img", "table", "thead", "tbody", "tr", "th", "td", "input",
    ]
    static let allowedAttributes: Set<String> = ["href", "src", "alt", "title", "class", "align", "start", "type", "checked", "disabled"]

    @Test(arguments: postlyCorpus + owaspCorpus)
    func nothingExecutableSurvives(markdown: String) {
        let html = Markdown.render(markdown).html
        for tag in Self.tags(in: html) {
            if tag.hasPrefix("!-- raw HTML omitted --") { continue }
            let name = String(tag.prefix { $0.isLetter || $0.isNumber || $0 == "/" }.drop { $0 == "/" })
            #expect(Self.allowedTags.contains(name), "tag <\(tag)> in \(html)")
            for (attribute, value) in Self.attributes(of: tag) {
                #expect(Self.allowedAttributes.contains(attribute), "\(attribute) in <\(tag)>")
                if attribute == "href" || attribute == "src" {
                    let compact = value.lowercased().filter { !$0.isWhitespace && !$0.isNewline }
                    for scheme in ["javascript:", "vbscript:", "livescript:", "data:", "file:"] {
                        #expect(!compact.contains(scheme), "\(scheme) in <\(tag)>")
                    }
                }
            }
        }
    }

    /// A line that opens `<script`, `<style`, `<pre` or `<textarea` without closing it starts
    /// an HTML block that CommonMark ends only at the closing tag, so the rest of the post is
    /// part of it (and omitted): the spec's rule, GitHub's too.
    static let unclosedRawTextBlocks: Set<String> = ["<SCRIPT SRC=http://xss.rocks/xss.js?< B >"]

    @Test(arguments: (postlyCorpus + owaspCorpus).filter { !unclosedRawTextBlocks.contains($0) })
    func theMarkdownAroundHostileInputStillRenders(markdown: String) {
        let html = Markdown.render("Intro paragraph.\n\n\(markdown)\n\nOutro **bold**.").html
        #expect(html.hasPrefix("<p>Intro paragraph.</p>\n"))
        #expect(html.hasSuffix("<p>Outro <strong>bold</strong>.</p>\n"), "\(html)")
    }

    @Test func anUnclosedScriptBlockRunsToTheEndAndIsOmitted() {
        for markdown in Self.unclosedRawTextBlocks {
            #expect(Markdown.render("Intro.\n\n\(markdown)\n\nOutro **bold**.").html == "<p>Intro.</p>\n<!-- raw HTML omitted -->\n")
        }
    }

    @Test func theReportedPostRendersWhole() {
        let html = Markdown.render("Intro paragraph.\n\n<script>alert(1)</script>\n\nOutro **bold**.").html
        #expect(html == "<p>Intro paragraph.</p>\n<!-- raw HTML omitted -->\n<p>Outro <strong>bold</strong>.</p>\n")
    }

    @Test func safeLinksAndImagesKeepTheirURLs() {
        let html = Markdown.render("[a](https://a.test/x?y=1&z=2) [b](/relative) [c](#top) [d](mailto:ada@example.com) ![e](https://img.test/a.png)").html
        #expect(html.contains("<a href=\"https://a.test/x?y=1&amp;z=2\">a</a>"))
        #expect(html.contains("<a href=\"/relative\">b</a>"))
        #expect(html.contains("<a href=\"#top\">c</a>"))
        #expect(html.contains("<a href=\"mailto:ada@example.com\">d</a>"))
        #expect(html.contains("<img src=\"https://img.test/a.png\" alt=\"e\" />"))
    }

    @Test func dangerousLinksKeepTheirTextAndLoseTheirURL() {
        #expect(Markdown.render("[click](javascript:alert(1))").html == "<p><a href=\"\">click</a></p>\n")
        #expect(Markdown.render("![pixel](data:image/png;base64,iVBORw0KGgo=)").html == "<p><img src=\"\" alt=\"pixel\" /></p>\n")
    }

    /// cmark-gfm 0.29 copies a reference definition into each link that uses it: the first of
    /// these 85 KB posts rendered to 250 MB, and a longer one could take the service's memory.
    /// The others hide the label from a simpler look.
    @Test(arguments: [("[r]", "[x][r] "), ("[r\\[s]", "[x][r\\[s] "), ("[r\ns]", "[x][r s] "), ("> 1. [r]", "[x][r] ")])
    func referenceLinksCannotMultiplyAPost(label: String, use: String) {
        let markdown = label + ": https://a.test/" + String(repeating: "a", count: 50_000) + "\n\n" + String(repeating: use, count: 5_000)
        let html = Markdown.render(markdown).html
        // Not the HTML itself: when this fails, it is hundreds of megabytes.
        let (size, links) = (html.utf8.count, html.components(separatedBy: "<a href").count - 1)
        #expect(size < 2 * markdown.utf8.count)
        #expect(links <= 1, "the definition's URL, autolinked: its uses are text")
    }

    /// cmark-gfm 0.29 pads each row of a table to its header's columns: a header of 1,000
    /// columns over 1,000 one-letter lines (6 KB) rendered to 10 MB, and 18 KB to 90 MB. Past
    /// the cell bound, the document renders without tables.
    @Test func aTableOfMillionsOfPaddedCellsIsText() {
        let markdown = String(repeating: "a|", count: 1_000) + "\n" + String(repeating: "-|", count: 1_000) + "\n" + String(repeating: "x\n", count: 1_000)
        let html = Markdown.render(markdown).html
        #expect(html.utf8.count < 4 * markdown.utf8.count, "\(html.utf8.count) bytes")
        #expect(!html.contains("<table"))
    }

    /// Ways of writing such a table that a count of delimiter rows missed: a delimiter-like row
    /// among its rows, lines ended by `\r` alone, a vertical tab in the delimiter row.
    @Test(arguments: ["|-\n", "", "\r"])
    func noWayOfWritingTheTableEscapesTheBound(variant: String) {
        var markdown = String(repeating: "a|", count: 1_000) + "\n" + String(repeating: "-|", count: 1_000) + "\n" + variant
            + String(repeating: "x\n", count: 1_000)
        if variant == "\r" { markdown = markdown.replacingOccurrences(of: "\n", with: "\r") }
        if variant.isEmpty { markdown = markdown.replacingOccurrences(of: "-|", with: "-\u{0B}|") }
        let html = Markdown.render(markdown).html
        #expect(html.utf8.count < 4 * markdown.utf8.count, "\(html.utf8.count) bytes")
    }

    /// cmark-gfm's work on nested brackets grows with their square: past the bracket bound,
    /// they are text.
    /// A combining mark after the bracket makes it part of another character, which a `String`
    /// replacement left alone and cmark still read as a bracket.
    @Test(arguments: ["", "\u{301}"])
    func tensOfThousandsOfNestedBracketsAreText(mark: String) {
        let markdown = String(repeating: "![" + mark, count: 25_000) + String(repeating: "[" + mark + "]()", count: 12_500)
        let html = Markdown.render(markdown).html
        #expect(!html.contains("<img") && !html.contains("<a "))
        #expect(html.utf8.count < 2 * markdown.utf8.count)
    }

    /// A bracket its writer escaped stays text past the bound: a second backslash turned
    /// `\[x](y)` into `\\[x](y)`, a backslash and a link.
    @Test func anEscapedBracketPastTheBoundStaysText() {
        let markdown = String(repeating: "[", count: 5_001) + "\n\nSee \\[x](y) here."
        let html = Markdown.render(markdown).html
        #expect(!html.contains("<a "))
        #expect(html.contains("<p>See [x](y) here.</p>"))
    }

    /// The same for a reference definition's `]:`.
    @Test func aCombiningMarkDoesNotHideAReferenceDefinition() {
        let markdown = "[a]:\u{301}" + String(repeating: "x", count: 60_000) + "\n\n" + String(repeating: "[a]", count: 4_990)
        #expect(Markdown.render(markdown).html.utf8.count < 2 * markdown.utf8.count)
    }

    /// A delimiter row without a leading `|` whose first column is many dashes is a table's,
    /// not 40 list markers.
    @Test func aTableWithAWideFirstColumnRendersAsATable() {
        let dashes = String(repeating: "-", count: 40)
        let html = Markdown.render("Name | Value\n\(dashes)|------\na | 1\nb | 2\n").html
        #expect(html.contains("<table>") && html.components(separatedBy: "<tr>").count - 1 == 3)
    }

    @Test func anOrdinaryTableRendersAsATable() {
        let rows = (1...500).map { "| \($0) | \($0 * $0) | `x\($0)` |" }.joined(separator: "\n")
        let html = Markdown.render("| n | square | code |\n|---:|:---|---|\n" + rows + "\n\nAfter.").html
        #expect(html.components(separatedBy: "<tr>").count - 1 == 501)
        #expect(html.contains("<td align=\"right\">500</td>") && html.contains("<p>After.</p>"))
    }

    /// cmark-gfm's work on a line grows with its nesting times its emphasis delimiters: 10,000
    /// `>` before 10,000 `a*` took seconds, 25,000 of each half a minute. Past the nesting
    /// bound, a line's markers are text.
    @Test(arguments: ["> ", ">", "- ", "* ", "1. ", "2) "])
    func nestingStopsAtItsBound(marker: String) {
        let markdown = String(repeating: marker, count: 10_000) + String(repeating: "a*", count: 10_000)
        let html = Markdown.render(markdown).html
        let opened = ["<blockquote>", "<ul>", "<ol>", "<ol start=\"2\">"].map { html.components(separatedBy: $0).count - 1 }.reduce(0, +)
        #expect(opened == Markdown.nestingLimit)
        #expect(html.utf8.count < 5 * markdown.utf8.count, "each marker past the bound is text: `&gt;` at most")
    }

    /// Lines indented ever deeper nest a list level per two columns: each line's own markers
    /// within the bound, they nested 32 levels a line.
    @Test(arguments: ["", "> "])
    func nestingBuiltByIndentationStopsAtTheBound(quote: String) {
        let lines = (0..<60).map { quote + String(repeating: "\t", count: 16 * $0) + String(repeating: "- ", count: 31) + "x" }
        let html = Markdown.render(lines.joined(separator: "\n") + String(repeating: "a*", count: 10_000)).html
        #expect(html.components(separatedBy: "<ul>").count - 1 <= Markdown.nestingLimit)
    }

    @Test func aThematicBreakOfManyMarksStaysOne() {
        #expect(Markdown.render(String(repeating: "* ", count: 40)).html == "<hr />\n")
        #expect(Markdown.render(String(repeating: "- ", count: 40) + "\n\ntext").html == "<hr />\n<p>text</p>\n")
    }

    @Test func ordinaryNestingIsUntouched() {
        let markdown = "> quoted\n> > twice\n>\n> - a\n>   - b\n>     1. c\n\n- [ ] task\n\n| a | b |\n|---|---|\n| 1 | 2 |"
        #expect(Markdown.boundingNesting(markdown) == markdown)
    }

    @Test func referenceLinksOfAnOrdinaryPostResolve() {
        let uses = (0..<300).map { "[link \($0)][r\($0 % 10)] and `if a[0]: pass`" }.joined(separator: "\n")
        let definitions = (0..<10).map { "[r\($0)]: https://a.test/\($0) \"title \($0)\"" }.joined(separator: "\n")
        let html = Markdown.render(uses + "\n\n" + definitions).html
        #expect(html.components(separatedBy: "<a href=\"https://a.test/").count - 1 == 300)
        #expect(html.contains("<code>if a[0]: pass</code>"))
    }

    /// The insides of the tags of `html` (text is escaped, so every `<` opens a real tag).
    static func tags(in html: String) -> [String] {
        var tags: [String] = []
        var current: String?
        for character in html {
            if character == "<" {
                current = ""
            } else if character == ">", let tag = current {
                tags.append(tag)
                current = nil
            } else {
                current?.append(character)
            }
        }
        return tags
    }

    /// `name="value"` pairs: cmark always double-quotes and escapes `"` inside values.
    static func attributes(of tag: String) -> [(String, String)] {
        tag.matches(of: /([A-Za-z-]+)="([^"]*)"/).map { (String($0.output.1).lowercased(), String($0.output.2)) }
    }
}
