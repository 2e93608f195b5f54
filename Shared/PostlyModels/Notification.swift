import Foundation

public enum NotificationType: String, Codable, Sendable, CaseIterable {
    case postLiked = "post.liked"
    case commentCreated = "comment.created"
}

public struct Notification: Codable, Sendable, Hashable {
    public var id: String
    public var type: NotificationType
    public var actor: Author
    public var postId: String
    public var postTitle: String
    public var commentId: String?
    public var createdAt: Date
    public var readAt: Date?

    public init(
        id: String, type: NotificationType, actor: Author, postId: String, postTitle: String,
        commentId: String?, createdAt: Date, readAt: Date?
    ) {
        self.id = id
        self.type = type
        self.actor = actor
        self.postId = postId
        self.postTitle = postTitle
        self.commentId = commentId
        self.createdAt = createdAt
        self.readAt = readAt
    }

    enum CodingKeys: String, CodingKey {
        case id = "_id", type, actor, postId, postTitle, commentId, createdAt, readAt
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(type, forKey: .type)
        try container.encode(actor, forKey: .actor)
        try container.encode(postId, forKey: .postId)
        try container.encode(postTitle, forKey: .postTitle)
        try container.encode(commentId, forKey: .commentId)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(readAt, forKey: .readAt)
    }
}
