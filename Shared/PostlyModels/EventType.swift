public enum EventType: String, Codable, Sendable, CaseIterable {
    case userRegistered = "user.registered"
    case userUpdated = "user.updated"
    case sessionRevoked = "session.revoked"
    case postCreated = "post.created"
    case postUpdated = "post.updated"
    case postDeleted = "post.deleted"
    case postLiked = "post.liked"
    case postUnliked = "post.unliked"
    case commentCreated = "comment.created"
    case commentDeleted = "comment.deleted"

    public var topic: Topic {
        switch self {
        case .userRegistered, .userUpdated, .sessionRevoked: .users
        case .postCreated, .postUpdated, .postDeleted, .postLiked, .postUnliked: .posts
        case .commentCreated, .commentDeleted: .comments
        }
    }
}
