import Foundation

public enum PostStatus: String, Codable, Sendable, CaseIterable {
    case published
    case draft
    /// To be published at the post's `publishAt`; a draft for everyone but its author until then.
    /// Never in an event: events carry it as `draft` with `publishAt` (`PostSnapshot`), which
    /// consumers built before it decode.
    case scheduled
}

/// A post as the clients decode it: every key present (`null` where empty), `_id` as the id.
public struct Post: Codable, Sendable, Hashable {
    public var id: String
    public var title: String
    /// Markdown as written by the author.
    public var content: String
    /// `content` rendered to sanitized HTML. Always in a single post's answer; in lists only
    /// when asked for (`ListFormats.html`), and then the key is left out, not null.
    public var contentHtml: String?
    /// Plain text, at most 200 characters.
    public var excerpt: String
    public var slug: String
    public var status: PostStatus
    /// An absolute http(s) URL.
    public var coverImage: String?
    public var author: Author
    public var views: Int
    /// The most views an import may bring (9 × 10^15): the views counted here on top of it
    /// can never overflow.
    public static let maxImportedViews = 9_000_000_000_000_000
    public var likes: Int
    /// Oldest first.
    public var comments: [Comment]
    public var commentsCount: Int
    /// Minutes.
    public var readTime: Int
    public var createdAt: Date
    public var updatedAt: Date
    public var publishedAt: Date?
    public var version: Int
    /// When a scheduled post is to be published; nil unless `status` is `scheduled`.
    public var publishAt: Date?

    public init(
        id: String, title: String, content: String, contentHtml: String?, excerpt: String, slug: String,
        status: PostStatus, coverImage: String?, author: Author, views: Int, likes: Int, comments: [Comment],
        commentsCount: Int, readTime: Int, createdAt: Date, updatedAt: Date, publishedAt: Date?, version: Int,
        publishAt: Date? = nil
    ) {
        self.id = id
        self.title = title
        self.content = content
        self.contentHtml = contentHtml
        self.excerpt = excerpt
        self.slug = slug
        self.status = status
        self.coverImage = coverImage
        self.author = author
        self.views = views
        self.likes = likes
        self.comments = comments
        self.commentsCount = commentsCount
        self.readTime = readTime
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.publishedAt = publishedAt
        self.version = version
        self.publishAt = publishAt
    }

    enum CodingKeys: String, CodingKey {
        case id = "_id", title, content, contentHtml, excerpt, slug, status, coverImage, author, views, likes,
            comments, commentsCount, readTime, createdAt, updatedAt, publishedAt, version, publishAt
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(title, forKey: .title)
        try container.encode(content, forKey: .content)
        try container.encodeIfPresent(contentHtml, forKey: .contentHtml)
        try container.encode(excerpt, forKey: .excerpt)
        try container.encode(slug, forKey: .slug)
        try container.encode(status, forKey: .status)
        try container.encode(coverImage, forKey: .coverImage)
        try container.encode(author, forKey: .author)
        try container.encode(views, forKey: .views)
        try container.encode(likes, forKey: .likes)
        try container.encode(comments, forKey: .comments)
        try container.encode(commentsCount, forKey: .commentsCount)
        try container.encode(readTime, forKey: .readTime)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(updatedAt, forKey: .updatedAt)
        try container.encode(publishedAt, forKey: .publishedAt)
        try container.encode(version, forKey: .version)
        try container.encode(publishAt, forKey: .publishAt)
    }
}

extension Post: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object { writeFields(to: &$0) }
    }

    /// The keys of `encode(to:)`, sorted, inside an object: answers that carry a post and more
    /// (search results) write these and their own.
    public func writeFields(to json: inout JSONWriter) {
        json.field("_id", id)
        json.field("author", author)
        json.field("comments", comments)
        json.field("commentsCount", commentsCount)
        json.field("content", content)
        if let contentHtml { json.field("contentHtml", contentHtml) }
        json.field("coverImage", coverImage)
        json.field("createdAt", createdAt)
        json.field("excerpt", excerpt)
        json.field("likes", likes)
        json.field("publishAt", publishAt)
        json.field("publishedAt", publishedAt)
        json.field("readTime", readTime)
        json.field("slug", slug)
        json.field("status", status.rawValue)
        json.field("title", title)
        json.field("updatedAt", updatedAt)
        json.field("version", version)
        json.field("views", views)
    }
}

/// Which optional renderings each post of a list carries (the feed, a user's posts, search
/// results). `html` adds `contentHtml`: lists leave it out by default, since a phone's list
/// shows `content` or `excerpt` and the rendered body would double every page.
public struct ListFormats: Sendable, Equatable {
    public var html: Bool

    public init(html: Bool = false) {
        self.html = html
    }

    /// The `formats` query parameter: comma-separated names; names other than `html` are
    /// ignored, so a client may ask for a format a later version adds.
    public init(parameter: String?) {
        let names = (parameter ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        self.init(html: names.contains("html"))
    }
}

extension Post {
    /// This post as a list shows it.
    public func listed(_ formats: ListFormats) -> Post {
        var post = self
        if !formats.html { post.contentHtml = nil }
        return post
    }
}
