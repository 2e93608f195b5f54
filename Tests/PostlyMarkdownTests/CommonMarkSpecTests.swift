import PostlyMarkdown
import Testing

/// A representative set of the CommonMark spec's examples (0.29, the version cmark-gfm
/// 0.29.0.gfm.6 implements) and of the GFM spec's extension examples, one or more per
/// section, rendered exactly as the specs say. The spec's raw-HTML examples are replaced by
/// what safe rendering does with them (see `MarkdownSafetyTests`).
@Suite struct CommonMarkSpecTests {
    struct Example: Sendable, CustomTestStringConvertible {
        var section: String
        var markdown: String
        var html: String
        var testDescription: String { "\(section): \(markdown.debugDescription)" }
    }

    static let commonMark: [Example] = [
        .init(section: "Tabs", markdown: "\tfoo\tbaz\t\tbim\n", html: "<pre><code>foo\tbaz\t\tbim\n</code></pre>\n"),
        .init(section: "Precedence", markdown: "- `one\n- two`\n", html: "<ul>\n<li>`one</li>\n<li>two`</li>\n</ul>\n"),
        .init(section: "Thematic breaks", markdown: "***\n---\n___\n", html: "<hr />\n<hr />\n<hr />\n"),
        .init(section: "Thematic breaks", markdown: "+++\n", html: "<p>+++</p>\n"),
        .init(
            section: "ATX headings", markdown: "# foo\n## foo\n### foo\n#### foo\n##### foo\n###### foo\n",
            html: "<h1>foo</h1>\n<h2>foo</h2>\n<h3>foo</h3>\n<h4>foo</h4>\n<h5>foo</h5>\n<h6>foo</h6>\n"),
        .init(section: "ATX headings", markdown: "####### foo\n", html: "<p>####### foo</p>\n"),
        .init(section: "ATX headings", markdown: "#5 bolt\n\n#hashtag\n", html: "<p>#5 bolt</p>\n<p>#hashtag</p>\n"),
        .init(
            section: "Setext headings", markdown: "Foo *bar*\n=========\n\nFoo *bar*\n---------\n",
            html: "<h1>Foo <em>bar</em></h1>\n<h2>Foo <em>bar</em></h2>\n"),
        .init(
            section: "Indented code blocks", markdown: "    a simple\n      indented code block\n",
            html: "<pre><code>a simple\n  indented code block\n</code></pre>\n"),
        .init(section: "Fenced code blocks", markdown: "```\n<\n >\n```\n", html: "<pre><code>&lt;\n &gt;\n</code></pre>\n"),
        .init(section: "Fenced code blocks", markdown: "~~~\naaa\n```\n~~~\n", html: "<pre><code>aaa\n```\n</code></pre>\n"),
        .init(
            section: "Fenced code blocks", markdown: "```ruby\ndef foo(x)\n  return 3\nend\n```\n",
            html: "<pre><code class=\"language-ruby\">def foo(x)\n  return 3\nend\n</code></pre>\n"),
        .init(section: "Paragraphs", markdown: "aaa\n\nbbb\n", html: "<p>aaa</p>\n<p>bbb</p>\n"),
        .init(section: "Paragraphs", markdown: "aaa\nbbb\n", html: "<p>aaa\nbbb</p>\n"),
        .init(
            section: "Block quotes", markdown: "> # Foo\n> bar\n> baz\n",
            html: "<blockquote>\n<h1>Foo</h1>\n<p>bar\nbaz</p>\n</blockquote>\n"),
        .init(section: "Block quotes", markdown: "> bar\nbaz\n> foo\n", html: "<blockquote>\n<p>bar\nbaz\nfoo</p>\n</blockquote>\n"),
        .init(
            section: "List items", markdown: "1.  A paragraph\n    with two lines.\n\n        indented code\n\n    > A block quote.\n",
            html: "<ol>\n<li>\n<p>A paragraph\nwith two lines.</p>\n<pre><code>indented code\n</code></pre>\n<blockquote>\n<p>A block quote.</p>\n</blockquote>\n</li>\n</ol>\n"),
        .init(
            section: "Lists", markdown: "- foo\n- bar\n+ baz\n",
            html: "<ul>\n<li>foo</li>\n<li>bar</li>\n</ul>\n<ul>\n<li>baz</li>\n</ul>\n"),
        .init(
            section: "Lists", markdown: "1. foo\n2. bar\n3) baz\n",
            html: "<ol>\n<li>foo</li>\n<li>bar</li>\n</ol>\n<ol start=\"3\">\n<li>baz</li>\n</ol>\n"),
        .init(
            section: "Lists", markdown: "- a\n- b\n\n- c\n",
            html: "<ul>\n<li>\n<p>a</p>\n</li>\n<li>\n<p>b</p>\n</li>\n<li>\n<p>c</p>\n</li>\n</ul>\n"),
        .init(section: "Backslash escapes", markdown: "\\*not emphasized*\n", html: "<p>*not emphasized*</p>\n"),
        .init(section: "Entity and numeric character references", markdown: "&#35; &#1234; &#992; &#0;\n", html: "<p># Ӓ Ϡ �</p>\n"),
        .init(section: "Entity and numeric character references", markdown: "&#X22; &#XD06; &#xcab;\n", html: "<p>&quot; ആ ಫ</p>\n"),
        .init(section: "Entity and numeric character references", markdown: "&copy; &AElig; &amp;\n", html: "<p>© Æ &amp;</p>\n"),
        .init(section: "Code spans", markdown: "`foo`\n", html: "<p><code>foo</code></p>\n"),
        .init(section: "Code spans", markdown: "`` foo ` bar ``\n", html: "<p><code>foo ` bar</code></p>\n"),
        .init(section: "Emphasis", markdown: "*foo bar*\n", html: "<p><em>foo bar</em></p>\n"),
        .init(section: "Emphasis", markdown: "a * foo bar*\n", html: "<p>a * foo bar*</p>\n"),
        .init(section: "Emphasis", markdown: "foo*bar*\n", html: "<p>foo<em>bar</em></p>\n"),
        .init(section: "Emphasis", markdown: "_foo_bar\n", html: "<p>_foo_bar</p>\n"),
        .init(section: "Emphasis", markdown: "**foo bar**\n", html: "<p><strong>foo bar</strong></p>\n"),
        .init(section: "Emphasis", markdown: "*foo**bar**baz*\n", html: "<p><em>foo<strong>bar</strong>baz</em></p>\n"),
        .init(section: "Links", markdown: "[link](/uri \"title\")\n", html: "<p><a href=\"/uri\" title=\"title\">link</a></p>\n"),
        .init(section: "Links", markdown: "[link]()\n", html: "<p><a href=\"\">link</a></p>\n"),
        .init(section: "Links", markdown: "[link](foo%20b&auml;)\n", html: "<p><a href=\"foo%20b%C3%A4\">link</a></p>\n"),
        .init(section: "Links", markdown: "[foo]: /url \"title\"\n\n[foo]\n", html: "<p><a href=\"/url\" title=\"title\">foo</a></p>\n"),
        .init(section: "Images", markdown: "![foo](/url \"title\")\n", html: "<p><img src=\"/url\" alt=\"foo\" title=\"title\" /></p>\n"),
        .init(
            section: "Images", markdown: "![foo *bar*](train.jpg \"train & tracks\")\n",
            html: "<p><img src=\"train.jpg\" alt=\"foo bar\" title=\"train &amp; tracks\" /></p>\n"),
        .init(section: "Autolinks", markdown: "<http://foo.bar.baz>\n", html: "<p><a href=\"http://foo.bar.baz\">http://foo.bar.baz</a></p>\n"),
        .init(
            section: "Autolinks", markdown: "<foo@bar.example.com>\n",
            html: "<p><a href=\"mailto:foo@bar.example.com\">foo@bar.example.com</a></p>\n"),
        .init(section: "Hard line breaks", markdown: "foo  \nbaz\n", html: "<p>foo<br />\nbaz</p>\n"),
        .init(section: "Hard line breaks", markdown: "foo\\\nbaz\n", html: "<p>foo<br />\nbaz</p>\n"),
        .init(section: "Textual content", markdown: "hello $.;'there\n", html: "<p>hello $.;'there</p>\n"),
    ]

    static let gitHubExtensions: [Example] = [
        .init(
            section: "Tables", markdown: "| foo | bar |\n| --- | --- |\n| baz | bim |\n",
            html: "<table>\n<thead>\n<tr>\n<th>foo</th>\n<th>bar</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td>baz</td>\n<td>bim</td>\n</tr>\n</tbody>\n</table>\n"),
        .init(
            section: "Tables", markdown: "| abc | defghi |\n:-: | -----------:\nbar | baz\n",
            html: "<table>\n<thead>\n<tr>\n<th align=\"center\">abc</th>\n<th align=\"right\">defghi</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td align=\"center\">bar</td>\n<td align=\"right\">baz</td>\n</tr>\n</tbody>\n</table>\n"),
        .init(section: "Strikethrough", markdown: "~~Hi~~ Hello, world!\n", html: "<p><del>Hi</del> Hello, world!</p>\n"),
        .init(
            section: "Autolinks (extension)", markdown: "www.commonmark.org\n",
            html: "<p><a href=\"http://www.commonmark.org\">www.commonmark.org</a></p>\n"),
        .init(
            section: "Autolinks (extension)", markdown: "Visit https://encrypted.google.com/search?q=Markup+(business)\n",
            html: "<p>Visit <a href=\"https://encrypted.google.com/search?q=Markup+(business)\">https://encrypted.google.com/search?q=Markup+(business)</a></p>\n"),
        .init(section: "Autolinks (extension)", markdown: "foo@bar.baz\n", html: "<p><a href=\"mailto:foo@bar.baz\">foo@bar.baz</a></p>\n"),
        .init(
            section: "Task list items", markdown: "- [ ] foo\n- [x] bar\n",
            html: "<ul>\n<li><input type=\"checkbox\" disabled=\"\" /> foo</li>\n<li><input type=\"checkbox\" checked=\"\" disabled=\"\" /> bar</li>\n</ul>\n"),
    ]

    @Test(arguments: commonMark)
    func rendersAsTheCommonMarkSpecSays(example: Example) {
        #expect(Markdown.render(example.markdown).html == example.html)
    }

    @Test(arguments: gitHubExtensions)
    func rendersTheGitHubExtensionsAsTheirSpecSays(example: Example) {
        #expect(Markdown.render(example.markdown).html == example.html)
    }

    @Test func rawHTMLIsOmittedNotPassedThrough() {
        #expect(Markdown.render("<a><bab><c2c>\n").html == "<p><!-- raw HTML omitted --><!-- raw HTML omitted --><!-- raw HTML omitted --></p>\n")
        #expect(Markdown.render("<div>\n*hello*\n</div>\n").html == "<!-- raw HTML omitted -->\n")
    }

    @Test func textIsThePlainTextOfTheDocument() {
        let rendering = Markdown.render("# Title\n\nSome *emphasis* and `code`,\na [link](https://a.test) <b>raw</b>.\n\n- one\n- two\n\n| a | b |\n|---|---|\n| c | d |\n")
        #expect(rendering.text == "Title Some emphasis and code, a link raw. one two a b c d")
    }
}
