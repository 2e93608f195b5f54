import Foundation
import PostlyEvents
import PostlyModels

/// What a new post is made of, validated.
public struct NewPost: Sendable, Hashable {
    public let title: String
    public let content: String
    /// nil: `published`, unless `publishAt` schedules it.
    public let status: PostStatus?
    public let coverImage: String?
    public let publishAt: PublishAtRequest
    /// The content rendered, once, before the write's transaction opens (and not again when
    /// the transaction is retried): the transaction holds a connection only for its statements.
    public let rendering: PostRendering

    public init(title: String, content: String, status: PostStatus?, coverImage: String?, publishAt: PublishAtRequest = .absent) {
        self.title = title
        self.content = content
        self.status = status
        self.coverImage = coverImage
        self.publishAt = publishAt
        rendering = PostRendering(markdown: content)
    }
}

/// The fields a `PUT` changes; nil leaves a field as it is (`coverImage: .some(nil)` removes it).
public struct PostChanges: Sendable, Hashable {
    public var title: String?
    public var content: String?
    public var status: PostStatus?
    public var coverImage: String??
    public var publishAt: PublishAtRequest = .absent
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

/// What the posts service's storage refuses, in the domain's words; the controllers map
/// them to problem documents.
public enum PostError: Error, Sendable, Hashable {
    /// No such post, or another user's draft (which does not exist for anyone but its author).
    case notFound
    /// Another user's published post: only its author may change it.
    case notAuthor
    /// A per-author feed of an id no post or user event names.
    case authorNotFound
    /// A field's value the post cannot take (scheduling, `PublishSchedule`): why, by field.
    case invalid(field: String, String)
}

/// The posts service's storage. Reads take the database; every write runs inside the
/// service's write unit (`WriteTransaction`), which adds the events it emits to the outbox
/// with the change. Not-found and not-allowed are `PostError`s.
public protocol PostRepository: Sendable {
    /// The post, if `viewer` may see it.
    func post(id: String, viewer: String?) async throws -> Post
    /// By current or former slug.
    func post(slug: String, viewer: String?) async throws -> Post
    func list(_ filter: PostFilter, page: PageRequest) async throws -> PostPage
    func isLiked(id: String, by caller: Caller) async throws -> Bool

    func create(_ post: NewPost, by caller: Caller, in transaction: WriteTransaction) async throws -> Post
    func update(id: String, _ changes: PostChanges, by caller: Caller, ifMatch: [Int]?, in transaction: WriteTransaction) async throws -> UpdateOutcome
    func delete(id: String, by caller: Caller, in transaction: WriteTransaction) async throws
    /// Likes or unlikes; liking twice counts once, unliking what is not liked is fine.
    func setLiked(_ liked: Bool, id: String, by caller: Caller, in transaction: WriteTransaction) async throws
    /// Adds counted views, by post id.
    func addViews(_ views: [String: Int]) async throws
    /// Publishes up to `limit` scheduled posts due at `transaction.now`, passing over posts
    /// another transaction holds (an edit, another instance's scheduler), and emits
    /// `post.updated` for each; the posts it published (without their comments).
    func publishDue(limit: Int, in transaction: WriteTransaction) async throws -> [Post]
    /// When the next scheduled post falls due; nil when none is scheduled.
    func nextDue() async throws -> Date?
    /// The `FeedContent.size` latest published posts, of every author or of `authorId`
    /// (`authorNotFound` when no post or user event names it), and when that last changed.
    func feed(authorId: String?, epoch: Date) async throws -> FeedContent
    /// Emits `post.updated` with the current state of up to `limit` posts after id `after`, in
    /// id order; returns their ids, none when there are no more.
    func republish(after: String, limit: Int, in transaction: WriteTransaction) async throws -> [String]

    /// Inserts a post of an earlier deployment with an imported `post.created`, unless a post
    /// with its id exists or existed (a tombstone in the change feed's log).
    func importPost(_ post: ImportedPost, in transaction: WriteTransaction) async throws -> ImportResult
    /// Records that the posts of user `from` are now `to`'s (users merged by an import).
    func importAliases(_ aliases: [AuthorAlias], in transaction: WriteTransaction) async throws
    /// Inserts likes of known posts (a like there already, or twice in the batch, is `existing`;
    /// one of an unknown post is rejected) and recounts the touched posts' likes. No events.
    func importLikes(_ likes: [ImportedLike], in transaction: WriteTransaction) async throws -> ImportOutcome
    /// The user whose posts an imported user's id now names; nil when it names nobody else.
    func aliasTarget(of userId: String) async throws -> String?
}

/// A post of an earlier deployment, as the importer normalized it: its id, slug, dates and
/// views are kept; its HTML, excerpt and reading time are made here, as for any post.
public struct ImportedPost: Sendable, Hashable {
    public var id: String
    public var title: String
    public var content: String
    public var status: PostStatus
    public var slug: String
    public var coverImage: String?
    public var author: Author
    public var createdAt: Date
    public var updatedAt: Date
    /// nil for a draft; `createdAt` when a published post has none.
    public var publishedAt: Date?
    public var views: Int
}

/// The posts of user `from` are `to`'s: `GET /api/users/{from}/posts` lists `to`'s.
public struct AuthorAlias: Codable, Sendable, Hashable {
    public var from: String
    public var to: String
}

public struct ImportedLike: Codable, Sendable, Hashable {
    public var postId: String
    public var userId: String
    public var createdAt: Date

    public var id: String { ImportOutcome.likeId(postId: postId, userId: userId) }
}

extension PostRepository {
    /// Emits `post.updated` for every post, in batches of 200 in id order, each its own
    /// transaction so a large table never holds one long lock; returns how many.
    public func republishAll(through writes: WriteUnit) async throws -> Int {
        var republished = 0
        var after = ""
        while true {
            let ids = try await writes.write { try await republish(after: after, limit: 200, in: $0) }
            guard let last = ids.last else { return republished }
            republished += ids.count
            after = last
        }
    }
}
