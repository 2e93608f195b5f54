import Foundation
import PostlyModels
import Testing

/// The objects as the existing iOS client decodes them: `_id`, every key present, dates
/// with milliseconds.
@Suite struct APIObjectTests {
    let author = Author(userId: "u1", name: "Ada", profilePicture: nil)
    let createdAt = Timestamp.parse("2026-11-21T06:44:12.123Z")!

    func json(_ value: some Encodable) throws -> [String: Any] {
        let data = try PostlyJSON.encoder().encode(value)
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    @Test func postCarriesEveryKeyTheAppDecodesWithNullsPresent() throws {
        let comment = Comment(id: "c1", postId: "p1", content: "Nice", author: author, createdAt: createdAt)
        let post = Post(
            id: "p1", title: "T", content: "C", contentHtml: "<p>C</p>", excerpt: "C", slug: "t", status: .draft,
            coverImage: nil, author: author, views: 0, likes: 0, comments: [comment], commentsCount: 1, readTime: 1,
            createdAt: createdAt, updatedAt: createdAt, publishedAt: nil, version: 1)
        let object = try json(post)
        for key in ["_id", "title", "content", "author", "slug", "createdAt", "updatedAt", "status", "readTime", "views",
            "likes", "comments", "coverImage", "contentHtml", "excerpt", "commentsCount", "publishedAt", "version"] {
            #expect(object.keys.contains(key), "missing \(key)")
        }
        #expect(object["coverImage"] is NSNull)
        #expect(object["publishedAt"] is NSNull)
        #expect(object["createdAt"] as? String == "2026-11-21T06:44:12.123Z")
        #expect(object["status"] as? String == "draft")
        let embeddedAuthor = try #require(object["author"] as? [String: Any])
        #expect(embeddedAuthor["profilePicture"] is NSNull)
        #expect(embeddedAuthor["email"] == nil)
        let comments = try #require(object["comments"] as? [[String: Any]])
        #expect(comments.first?["_id"] as? String == "c1")
        #expect(comments.first?["likes"] as? Int == 0)
        let decoded = try PostlyJSON.decoder().decode(Post.self, from: PostlyJSON.encoder().encode(post))
        #expect(decoded == post)
    }

    @Test func userShowsEmailAndNullLastLogin() throws {
        let user = User(userId: "u1", name: "Ada", email: "ada@example.com", createdAt: createdAt)
        let object = try json(user)
        #expect(object["email"] as? String == "ada@example.com")
        #expect(object["lastLogin"] is NSNull)
        #expect(object["profilePicture"] is NSNull)
    }

    @Test func notificationUsesUnderscoreIdAndDottedType() throws {
        let notification = Notification(
            id: "n1", type: .commentCreated, actor: author, postId: "p1", postTitle: "T", commentId: nil,
            createdAt: createdAt, readAt: nil)
        let object = try json(notification)
        #expect(object["_id"] as? String == "n1")
        #expect(object["type"] as? String == "comment.created")
        #expect(object["commentId"] is NSNull)
        #expect(object["readAt"] is NSNull)
    }

    @Test(arguments: [(0, 10, 0), (1, 10, 1), (10, 10, 1), (11, 10, 2), (100, 100, 1)])
    func paginationCountsPagesByCeiling(total: Int, limit: Int, pages: Int) {
        #expect(Pagination(total: total, page: 1, limit: limit).totalPages == pages)
    }

    @Test func problemRepeatsDetailAsErrorForEarlierClients() throws {
        let problem = Problem(status: 404, title: "Not Found", detail: "Post not found", code: "not_found", requestId: "r1")
        let object = try json(problem)
        #expect(object["type"] as? String == "about:blank")
        #expect(object["error"] as? String == "Post not found")
        #expect(object["requestId"] as? String == "r1")
    }
}
