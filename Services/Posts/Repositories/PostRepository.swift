import PostlyModels
import PostlyService

/// What a new post is made of, validated.
public struct NewPost: Sendable, Hashable, Codable {
    public var title: String
    public var content: String
    public var status: PostStatus
    public var coverImage: String?
}

/// The fields a `PUT` changes; nil leaves a field as it is (`coverImage: .some(nil)` removes it).
public struct PostChanges: Sendable, Hashable {
    public var title: String?
    public var content: String?
    public var status: PostStatus?
    public var coverImage: String??
}

/// Which posts a list shows.
public struct PostFilter: Sendable, Hashable {
    /// nil: any status.
    public var status: PostStatus?
    /// nil: every author.
    public var authorId: String?
}

/// The caller of a write: who they are and the name their token carries.
public struct Caller: Sendable, Hashable {
    public var userId: String
    public var name: String

    public init(userId: String, name: String) {
        self.userId = userId
        self.name = name
    }
}

public enum UpdateOutcome: Sendable {
    case updated(Post)
    /// `If-Match` named an older version; the current post.
    case stale(Post)
}

/// The posts service's storage. Every write commits its change and its event together.
public protocol PostRepository: Sendable {
    /// Creates a post; with an idempotency key, a retry answers the first result (`replayed`).
    func create(_ post: NewPost, by caller: Caller, idempotencyKey: String?) async throws -> (post: Post, replayed: Bool)
    /// The post, if `viewer` may see it; else `APIError.notFound`.
    func post(id: String, viewer: String?) async throws -> Post
    /// By current or former slug.
    func post(slug: String, viewer: String?) async throws -> Post
    func list(_ filter: PostFilter, page: PageRequest) async throws -> PostPage
    func update(id: String, _ changes: PostChanges, by caller: Caller, ifMatch: Int?) async throws -> UpdateOutcome
    func delete(id: String, by caller: Caller) async throws
    func like(id: String, by caller: Caller) async throws
    func unlike(id: String, by caller: Caller) async throws
    func isLiked(id: String, by caller: Caller) async throws -> Bool
    /// Adds counted views, by post id.
    func addViews(_ views: [String: Int]) async throws
    /// Emits `post.updated` with the current state of every post; returns how many.
    func republishAll() async throws -> Int
}
