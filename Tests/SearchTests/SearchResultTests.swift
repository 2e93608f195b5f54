import Foundation
import PostlyModels
import Testing

@testable import SearchService

/// A result is written straight into its answer's bytes; it must say what its `Encodable`
/// form says, the post's fields and `highlights` alike.
@Suite struct SearchResultTests {
    @Test(arguments: [nil, "<p>Body \"quoted\"</p>"])
    func aResultIsWrittenAsItsEncoderWritesIt(contentHtml: String?) throws {
        let author = Author(userId: "ada", name: "Ada \\ Lovelace", profilePicture: nil)
        let post = Post(
            id: "p1", title: "Kayaks & \"rivers\"", content: "Body\nline", contentHtml: contentHtml, excerpt: "Body", slug: "kayaks",
            status: .published, coverImage: "https://example.com/a.jpg", author: author, views: 0, likes: 3,
            comments: [Comment(id: "c1", postId: "p1", content: "Nice", author: author, createdAt: Date(timeIntervalSince1970: 1.5))],
            commentsCount: 1, readTime: 2, createdAt: Date(timeIntervalSince1970: 1_700_000_000.123),
            updatedAt: Date(timeIntervalSince1970: 1_700_000_001), publishedAt: nil, version: 4)
        let result = SearchResult(post: post, highlights: Highlights(title: "<mark>Kayaks</mark> &amp;", excerpt: "Body"))
        let written = try JSONSerialization.jsonObject(with: Data(try PostlyJSON.encode(result))) as? NSDictionary
        let encoded = try JSONSerialization.jsonObject(with: try PostlyJSON.encoder().encode(result)) as? NSDictionary
        #expect(written != nil)
        #expect(written == encoded)
        #expect((written?["highlights"] as? NSDictionary)?["title"] as? String == "<mark>Kayaks</mark> &amp;")
        #expect((written?["contentHtml"] as? String) == contentHtml)
    }

    /// A post kept ready to write (`ListedPost`) writes what its result would encode, with the
    /// author, comments, likes and content of the moment filled in and `contentHtml` only when
    /// asked for.
    @Test(arguments: [false, true])
    func aListedPostWritesTheResultItStandsFor(html: Bool) throws {
        let before = Author(userId: "ada", name: "Ada Lovelace", profilePicture: nil)
        let now = Author(userId: "ada", name: "Ada \"King\"", profilePicture: "https://example.com/ada.png")
        let post = Post(
            id: "p1", title: "Kayaks", content: "Body\nline \\ \u{1}", contentHtml: "<p>Body</p>", excerpt: "Body", slug: "kayaks",
            status: .published, coverImage: nil, author: before, views: 0, likes: 0, comments: [], commentsCount: 0, readTime: 2,
            createdAt: Date(timeIntervalSince1970: 1_700_000_000.123), updatedAt: Date(timeIntervalSince1970: 1_700_000_001),
            publishedAt: Date(timeIntervalSince1970: 1_700_000_002), version: 4)
        let comments = [Comment(id: "c1", postId: "p1", content: "Nice", author: now, createdAt: Date(timeIntervalSince1970: 1.5))]
        let highlights = Highlights(title: "<mark>Kayaks</mark>", excerpt: "Body")
        var content = JSONWriter()
        content.field("content", post.content)
        var written: [UInt8] = []
        ListedPost(post).write(
            author: now, comments: comments, likes: 3, content: content.bytes, contentHtml: html ? post.contentHtml : nil,
            highlights: highlights, to: &written)

        var shown = post
        shown.author = now
        shown.comments = comments
        shown.commentsCount = 1
        shown.likes = 3
        if !html { shown.contentHtml = nil }
        let expected = try JSONSerialization.jsonObject(with: try PostlyJSON.encoder().encode(SearchResult(post: shown, highlights: highlights)))
        #expect(try JSONSerialization.jsonObject(with: Data(written)) as? NSDictionary == expected as? NSDictionary)
    }
}
