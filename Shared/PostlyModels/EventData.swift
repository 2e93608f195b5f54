import Foundation

/// What an event says, by its type. Post and comment events carry the whole object as it
/// is after the change, so a consumer never has to call back.
public enum EventData: Sendable, Hashable {
    case userRegistered(UserSnapshot)
    case userUpdated(UserSnapshot)
    case sessionRevoked(SessionRevocation)
    case postCreated(PostSnapshot)
    case postUpdated(PostSnapshot)
    case postDeleted(PostSnapshot)
    case postLiked(PostLike)
    case postUnliked(PostLike)
    case commentCreated(CommentSnapshot)
    case commentDeleted(CommentSnapshot)

    public var type: EventType {
        switch self {
        case .userRegistered: .userRegistered
        case .userUpdated: .userUpdated
        case .sessionRevoked: .sessionRevoked
        case .postCreated: .postCreated
        case .postUpdated: .postUpdated
        case .postDeleted: .postDeleted
        case .postLiked: .postLiked
        case .postUnliked: .postUnliked
        case .commentCreated: .commentCreated
        case .commentDeleted: .commentDeleted
        }
    }

    init(type: EventType, from decoder: any Decoder) throws {
        switch type {
        case .userRegistered: self = .userRegistered(try UserSnapshot(from: decoder))
        case .userUpdated: self = .userUpdated(try UserSnapshot(from: decoder))
        case .sessionRevoked: self = .sessionRevoked(try SessionRevocation(from: decoder))
        case .postCreated: self = .postCreated(try PostSnapshot(from: decoder))
        case .postUpdated: self = .postUpdated(try PostSnapshot(from: decoder))
        case .postDeleted: self = .postDeleted(try PostSnapshot(from: decoder))
        case .postLiked: self = .postLiked(try PostLike(from: decoder))
        case .postUnliked: self = .postUnliked(try PostLike(from: decoder))
        case .commentCreated: self = .commentCreated(try CommentSnapshot(from: decoder))
        case .commentDeleted: self = .commentDeleted(try CommentSnapshot(from: decoder))
        }
    }

    func encode(to encoder: any Encoder) throws {
        switch self {
        case .userRegistered(let user), .userUpdated(let user): try user.encode(to: encoder)
        case .sessionRevoked(let revocation): try revocation.encode(to: encoder)
        case .postCreated(let post), .postUpdated(let post), .postDeleted(let post): try post.encode(to: encoder)
        case .postLiked(let like), .postUnliked(let like): try like.encode(to: encoder)
        case .commentCreated(let comment), .commentDeleted(let comment): try comment.encode(to: encoder)
        }
    }
}

/// `user.registered`, `user.updated`: what other services show of a user. No email: other
/// services have no use for it.
public struct UserSnapshot: Codable, Sendable, Hashable {
    public var userId: String
    public var name: String
    public var profilePicture: String?

    public init(userId: String, name: String, profilePicture: String?) {
        self.userId = userId
        self.name = name
        self.profilePicture = profilePicture
    }

    public var author: Author { Author(userId: userId, name: name, profilePicture: profilePicture) }

    // `profilePicture` is written as `null` when absent, like the sample events and `Author`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(userId, forKey: .userId)
        try container.encode(name, forKey: .name)
        try container.encode(profilePicture, forKey: .profilePicture)
    }
}

/// `session.revoked`: every service refuses the session's access tokens from now on, until
/// `expiresAt`, after which they are expired anyway and the entry can be forgotten.
public struct SessionRevocation: Codable, Sendable, Hashable {
    public var sessionId: String
    public var userId: String
    public var expiresAt: Date

    public init(sessionId: String, userId: String, expiresAt: Date) {
        self.sessionId = sessionId
        self.userId = userId
        self.expiresAt = expiresAt
    }
}

/// `post.created`, `post.updated`, `post.deleted`: the post after the change as the posts
/// service renders it, so consumers keep what they are given and render nothing: every field
/// of `Post` (`contentHtml` included; `comments` empty and `views` 0, which other services own
/// or count apart), the plain text search indexes, and `deletedAt` on `post.deleted`.
///
/// Written with the keys of `Post` plus `id`, `contentText` and `deletedAt`. Events written
/// before the post was carried whole have only `id` and the fields of `LegacyPostSnapshot`;
/// they still decode, without `contentHtml` and `contentText`.
public struct PostSnapshot: Codable, Sendable, Hashable {
    public var post: Post
    /// `content` as plain text; nil in an event written before it was carried.
    public var contentText: String?
    /// Set on `post.deleted`.
    public var deletedAt: Date?

    /// Without `contentHtml` and `contentText` when the three texts of the post would take
    /// more than `textsLimit` in the event.
    public init(post: Post, contentText: String?, deletedAt: Date? = nil) {
        self.post = post
        self.contentText = contentText
        self.deletedAt = deletedAt
        if Self.encodedSize(of: [post.content, post.contentHtml ?? "", contentText ?? ""]) > Self.textsLimit {
            self.post.contentHtml = nil
            self.contentText = nil
        }
    }

    /// The most bytes the texts of a post may take, as JSON escapes them, for the event to
    /// carry its HTML and plain text beside `content`: a Kafka record is at most 1 MB
    /// (librdkafka's `message.max.bytes`, the broker's too), and a record past it is refused
    /// on every try. `content` alone fits (100,000 characters, escaped at most six bytes
    /// each); past this, consumers render the other two, as for events written before they
    /// were carried.
    static let textsLimit = 900_000

    /// What `texts` take in JSON at most: six bytes for an escaped byte (`\u00XX`).
    static func encodedSize(of texts: [String]) -> Int {
        texts.reduce(0) { size, text in text.utf8.reduce(size) { $0 + (JSONWriter.isEscaped($1) ? 6 : 1) } }
    }

    enum CodingKeys: String, CodingKey {
        case id, contentText, deletedAt
        /// Only in events that carry the post whole.
        case postId = "_id"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if container.contains(.postId) {
            post = try Post(from: decoder)
        } else {
            post = try LegacyPostSnapshot(from: decoder).post
        }
        contentText = try container.decodeIfPresent(String.self, forKey: .contentText)
        deletedAt = try container.decodeIfPresent(Date.self, forKey: .deletedAt)
    }

    // Empty optionals are written as `null`: consumers see every key of the samples.
    // A scheduled post goes as a draft with its `publishAt`: consumers decode `status` as a
    // closed enum, and those built before `scheduled` would refuse it.
    public func encode(to encoder: any Encoder) throws {
        var post = post
        if post.status == .scheduled { post.status = .draft }
        try post.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(post.id, forKey: .id)
        try container.encode(contentText, forKey: .contentText)
        try container.encode(deletedAt, forKey: .deletedAt)
    }
}

/// The data of a `post.*` event before it carried the post whole: what such an event has.
/// Frozen: a new field of a post goes into `Post` only.
struct LegacyPostSnapshot: Decodable {
    var id: String
    var title: String
    var content: String
    var excerpt: String
    var slug: String
    var status: PostStatus
    var coverImage: String?
    var author: Author
    var readTime: Int
    var createdAt: Date
    var updatedAt: Date
    var publishedAt: Date?
    var version: Int

    var post: Post {
        Post(
            id: id, title: title, content: content, contentHtml: nil, excerpt: excerpt, slug: slug, status: status,
            coverImage: coverImage, author: author, views: 0, likes: 0, comments: [], commentsCount: 0, readTime: readTime,
            createdAt: createdAt, updatedAt: updatedAt, publishedAt: publishedAt, version: version)
    }
}

/// `post.liked`, `post.unliked`.
public struct PostLike: Codable, Sendable, Hashable {
    public var postId: String
    public var postTitle: String
    public var postAuthorId: String
    public var liker: Author
    /// The post's like count after the change.
    public var likes: Int

    public init(postId: String, postTitle: String, postAuthorId: String, liker: Author, likes: Int) {
        self.postId = postId
        self.postTitle = postTitle
        self.postAuthorId = postAuthorId
        self.liker = liker
        self.likes = likes
    }
}

/// `comment.created`, `comment.deleted`: the whole comment and what the notifications
/// service needs of its post.
public struct CommentSnapshot: Codable, Sendable, Hashable {
    public var comment: Comment
    public var postTitle: String
    public var postAuthorId: String

    public init(comment: Comment, postTitle: String, postAuthorId: String) {
        self.comment = comment
        self.postTitle = postTitle
        self.postAuthorId = postAuthorId
    }
}
