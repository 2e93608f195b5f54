import Foundation
import PostlyMarkdown
import PostlyModels
import PostlyPostgres

/// A post as stored: one row of `PostgresPostRepository.columns`.
struct PostRecord: Sendable {
    var id: String
    var title: String
    var content: String
    var contentHtml: String
    var excerpt: String
    var slug: String
    var status: PostStatus
    var coverImage: String?
    var authorId: String
    var authorName: String
    var authorPicture: String?
    var readTime: Int
    var views: Int
    var likes: Int
    var createdAt: Date
    var updatedAt: Date
    var publishedAt: Date?
    var version: Int
    var publishAt: Date?

    init(_ row: Row) throws {
        id = try row.decode("id")
        title = try row.decode("title")
        content = try row.decode("content")
        contentHtml = try row.decode("content_html")
        excerpt = try row.decode("excerpt")
        slug = try row.decode("slug")
        let statusText = try row.decode("status", as: String.self)
        guard let status = PostStatus(rawValue: statusText) else {
            throw DatabaseError.decoding(column: "status", reason: "unknown status")
        }
        self.status = status
        coverImage = try row.decode("cover_image")
        authorId = try row.decode("author_id")
        authorName = try row.decode("author_name")
        authorPicture = try row.decode("author_picture")
        readTime = try row.decode("read_time")
        views = try row.decode("views")
        likes = try row.decode("likes")
        createdAt = try row.decode("created_at")
        updatedAt = try row.decode("updated_at")
        publishedAt = try row.decode("published_at")
        version = try row.decode("version")
        publishAt = try row.decode("publish_at")
    }

    func isVisible(to viewer: String?) -> Bool {
        Self.isVisible(status: status, authorId: authorId, to: viewer)
    }

    /// The one visibility rule: a draft or scheduled post exists for its author only.
    static func isVisible(status: PostStatus, authorId: String, to viewer: String?) -> Bool {
        status == .published || authorId == viewer
    }

    var author: Author { Author(userId: authorId, name: authorName, profilePicture: authorPicture) }

    func post(comments: [Comment]) -> Post {
        Post(
            id: id, title: title, content: content, contentHtml: contentHtml, excerpt: excerpt, slug: slug, status: status,
            coverImage: coverImage, author: author, views: views, likes: likes, comments: comments,
            commentsCount: comments.count, readTime: readTime, createdAt: createdAt, updatedAt: updatedAt,
            publishedAt: publishedAt, version: version, publishAt: publishAt)
    }

    /// The post as its events carry it: rendered, without comments and views (others own them).
    /// `contentText` when the write just rendered it, else it is rendered here.
    func snapshot(contentText: String? = nil, deletedAt: Date? = nil) -> PostSnapshot {
        var post = post(comments: [])
        post.views = 0
        return PostSnapshot(post: post, contentText: contentText ?? Markdown.render(content).text, deletedAt: deletedAt)
    }
}

extension Post {
    func isVisible(to viewer: String?) -> Bool {
        PostRecord.isVisible(status: status, authorId: author.userId, to: viewer)
    }
}
