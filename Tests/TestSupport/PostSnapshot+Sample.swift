import Foundation
import PostlyModels

extension PostSnapshot {
    /// A post as the posts service's events carry it, for the consumers' tests: `content` is
    /// one paragraph of plain text, rendered as such.
    public static func sample(
        id: String, title: String = "A post", content: String = "Text", status: PostStatus = .published,
        author: Author, at date: Date = Date(), deleted: Bool = false, version: Int = 1
    ) -> PostSnapshot {
        let post = Post(
            id: id, title: title, content: content, contentHtml: "<p>\(content)</p>\n", excerpt: String(content.prefix(200)),
            slug: "a-post", status: status, coverImage: nil, author: author, views: 0, likes: 0, comments: [], commentsCount: 0,
            readTime: 1, createdAt: date, updatedAt: date, publishedAt: status == .published ? date : nil, version: version)
        return PostSnapshot(post: post, contentText: content, deletedAt: deleted ? date : nil)
    }
}
