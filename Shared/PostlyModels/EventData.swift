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

/// `post.created`, `post.updated`, `post.deleted`: the post after the change, without what
/// other services own (comments) or count apart (views, likes).
public struct PostSnapshot: Codable, Sendable, Hashable {
    public var id: String
    public var title: String
    public var content: String
    public var excerpt: String
    public var slug: String
    public var status: PostStatus
    public var coverImage: String?
    public var author: Author
    public var readTime: Int
    public var createdAt: Date
    public var updatedAt: Date
    public var publishedAt: Date?
    /// Set on `post.deleted`.
    public var deletedAt: Date?
    public var version: Int

    public init(
        id: String, title: String, content: String, excerpt: String, slug: String, status: PostStatus,
        coverImage: String?, author: Author, readTime: Int, createdAt: Date, updatedAt: Date,
        publishedAt: Date?, deletedAt: Date?, version: Int
    ) {
        self.id = id
        self.title = title
        self.content = content
        self.excerpt = excerpt
        self.slug = slug
        self.status = status
        self.coverImage = coverImage
        self.author = author
        self.readTime = readTime
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.publishedAt = publishedAt
        self.deletedAt = deletedAt
        self.version = version
    }

    // Empty optionals are written as `null`, as in the samples: consumers see every key.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(title, forKey: .title)
        try container.encode(content, forKey: .content)
        try container.encode(excerpt, forKey: .excerpt)
        try container.encode(slug, forKey: .slug)
        try container.encode(status, forKey: .status)
        try container.encode(coverImage, forKey: .coverImage)
        try container.encode(author, forKey: .author)
        try container.encode(readTime, forKey: .readTime)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(updatedAt, forKey: .updatedAt)
        try container.encode(publishedAt, forKey: .publishedAt)
        try container.encode(deletedAt, forKey: .deletedAt)
        try container.encode(version, forKey: .version)
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
