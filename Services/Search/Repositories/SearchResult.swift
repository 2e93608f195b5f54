import Foundation
import PostlyModels

/// One search result: the post as the posts service lists it, plus `highlights`.
/// `contentHtml` is written only when the query asked for it (`formats=html`).
struct SearchResult: Encodable, Sendable, Hashable {
    var post: Post
    var highlights: Highlights
    var includesHTML: Bool

    enum CodingKeys: String, CodingKey {
        case id = "_id", title, content, contentHtml, excerpt, slug, status, coverImage, author, views, likes,
            comments, commentsCount, readTime, createdAt, updatedAt, publishedAt, version, highlights
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(post.id, forKey: .id)
        try container.encode(post.title, forKey: .title)
        try container.encode(post.content, forKey: .content)
        if includesHTML { try container.encode(post.contentHtml, forKey: .contentHtml) }
        try container.encode(post.excerpt, forKey: .excerpt)
        try container.encode(post.slug, forKey: .slug)
        try container.encode(post.status, forKey: .status)
        try container.encode(post.coverImage, forKey: .coverImage)
        try container.encode(post.author, forKey: .author)
        try container.encode(post.views, forKey: .views)
        try container.encode(post.likes, forKey: .likes)
        try container.encode(post.comments, forKey: .comments)
        try container.encode(post.commentsCount, forKey: .commentsCount)
        try container.encode(post.readTime, forKey: .readTime)
        try container.encode(post.createdAt, forKey: .createdAt)
        try container.encode(post.updatedAt, forKey: .updatedAt)
        try container.encode(post.publishedAt, forKey: .publishedAt)
        try container.encode(post.version, forKey: .version)
        try container.encode(highlights, forKey: .highlights)
    }
}

/// One page of results, best first, and the number of all matches.
struct SearchPage: Sendable {
    var results: [SearchResult]
    var total: Int
}
