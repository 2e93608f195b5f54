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
}
