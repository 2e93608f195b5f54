import Foundation
import HTTPTypes
import Hummingbird
import PostlyEvents
import PostlyModels
import PostlyService

extension LikeStatus: ResponseEncodable {}

/// The posts and likes routes of the contract. Every write goes through the service's
/// write unit, which also records `Idempotency-Key` answers and retries transient errors.
public struct PostsController: Sendable {
    let repository: any PostRepository
    let views: ViewCounter
    let writes: WriteUnit

    public init(repository: any PostRepository, views: ViewCounter, writes: WriteUnit) {
        self.repository = repository
        self.views = views
        self.writes = writes
    }

    public func addRoutes(to router: Router<PostlyRequestContext>) {
        let posts = router.group("api/posts")
        posts.get(use: list)
        posts.get("slug/:slug", use: bySlug)
        posts.get(":id", use: byId)
        // `me` is a constant segment, so it wins over `:userId`.
        router.get("api/users/:userId/posts", use: usersPosts)

        let authorsPosts = router.authenticated("api/posts")
        authorsPosts.post(use: create)
        authorsPosts.put(":id", use: update)
        authorsPosts.delete(":id", use: delete)
        authorsPosts.post(":id/like", use: like)
        authorsPosts.delete(":id/like", use: unlike)
        authorsPosts.get(":id/like", use: likeStatus)
        router.authenticated("api/users/me/posts").get(use: myPosts)
    }

    // MARK: - Lists

    @Sendable func list(_ request: Request, context: PostlyRequestContext) async throws -> PostPage {
        let page = try request.pageRequest()
        let status = try Self.status(in: request) ?? .published
        var filter = PostFilter(status: status, authorId: nil)
        if status != .published {
            // Only the caller's own drafts and scheduled posts, and only for a caller.
            filter.authorId = try context.requireIdentity().userId
        }
        return try await listed(filter, page: page, request: request)
    }

    @Sendable func usersPosts(_ request: Request, context: PostlyRequestContext) async throws -> PostPage {
        let page = try request.pageRequest()
        let userId = try context.parameters.require("userId")
        let status = try Self.status(in: request) ?? .published
        if status != .published {
            guard try context.requireIdentity().userId == userId else {
                throw APIError.forbidden("Drafts and scheduled posts are visible to their author only")
            }
        }
        let answer = try await listed(PostFilter(status: status, authorId: userId), page: page, request: request)
        // An id an import merged into another user's lists that user's posts; asked only when
        // the id has no posts of its own, so the lists of every other author cost nothing more.
        guard answer.pagination.total == 0, status == .published, let survivor = try await repository.aliasTarget(of: userId) else {
            return answer
        }
        return try await listed(PostFilter(status: status, authorId: survivor), page: page, request: request)
    }

    @Sendable func myPosts(_ request: Request, context: AuthenticatedRequestContext) async throws -> PostPage {
        let page = try request.pageRequest()
        return try await listed(PostFilter(status: try Self.status(in: request), authorId: context.identity.userId), page: page, request: request)
    }

    /// A page of posts as lists show them: `contentHtml` only with `formats=html`.
    private func listed(_ filter: PostFilter, page: PageRequest, request: Request) async throws -> PostPage {
        var answer = try await repository.list(filter, page: page)
        let formats = ListFormats(parameter: request.uri.queryParameters.get("formats"))
        answer.posts = answer.posts.map { $0.listed(formats) }
        return answer
    }

    static func status(in request: Request) throws -> PostStatus? {
        guard let text = request.uri.queryParameters.get("status") else { return nil }
        guard let status = PostStatus(rawValue: text) else { throw APIError.badRequest("'status' must be 'published', 'draft' or 'scheduled'") }
        return status
    }

    // MARK: - One post

    @Sendable func byId(_ request: Request, context: PostlyRequestContext) async throws -> Response {
        let post = try await repository.post(id: try context.parameters.require("id"), viewer: context.identity?.userId)
        return try viewed(post, request: request, context: context)
    }

    @Sendable func bySlug(_ request: Request, context: PostlyRequestContext) async throws -> Response {
        let post = try await repository.post(slug: try context.parameters.require("slug"), viewer: context.identity?.userId)
        return try viewed(post, request: request, context: context)
    }

    /// Counts the view (in memory) and answers the post, or 304 when the client has this version.
    /// `countView=false` reads it without counting: another service's look at a post is no view.
    /// `no-store`: the ETag is the version, which likes, comments and views leave alone, so a
    /// client cache that revalidated on its own (URLSession's does) would show them stale.
    private func viewed(_ post: Post, request: Request, context: PostlyRequestContext) throws -> Response {
        var post = post
        switch request.uri.queryParameters.get("countView") {
        case nil, "true": post.views += views.record(post.id)
        case "false": post.views += views.unwritten(post.id)
        default: throw APIError.badRequest("'countView' must be 'true' or 'false'")
        }
        let etag = Self.etag(post)
        if let ifNoneMatch = request.headers[.ifNoneMatch], Self.matches(ifNoneMatch, etag: etag) {
            return Response(status: .notModified, headers: [.eTag: etag])
        }
        return try EditedResponse(headers: [.eTag: etag, .cacheControl: "no-store"], response: post).response(from: request, context: context)
    }

    static func etag(_ post: Post) -> String { "\"\(post.version)\"" }

    /// Whether an `If-None-Match` list names `etag` (weak comparison) or is `*`.
    static func matches(_ header: String, etag: String) -> Bool {
        entityTags(in: header).contains { $0 == "*" || $0 == etag }
    }

    /// The versions an `If-Match` names (RFC 9110: a list, any of which may be current): nil
    /// without one (or with `*`), empty when it names none.
    static func ifMatchVersions(_ request: Request) -> [Int]? {
        guard let header = request.headers[.ifMatch]?.trimmingCharacters(in: .whitespaces), header != "*" else { return nil }
        return entityTags(in: header).compactMap { tag in
            Int(tag.count >= 2 && tag.hasPrefix("\"") && tag.hasSuffix("\"") ? tag.dropFirst().dropLast() : tag[...])
        }
    }

    /// The tags of an `If-Match` or `If-None-Match` list, each as its ETag is written here. `W/`
    /// is read as the tag itself: a proxy that compresses an answer weakens its ETag, and the
    /// client sends back what it got.
    private static func entityTags(in header: String) -> [String] {
        header.split(separator: ",").map { candidate in
            var tag = candidate.trimmingCharacters(in: .whitespaces)
            if tag.hasPrefix("W/") { tag.removeFirst(2) }
            return tag
        }
    }

    // MARK: - Writes

    @Sendable func create(_ request: Request, context: AuthenticatedRequestContext) async throws -> StoredAnswer {
        var request = request
        let idempotency = try await IdempotencyKey.from(&request, userId: context.identity.userId)
        let new = try await request.decodeJSON(as: CreatePostRequest.self, context: context).validated()
        return try await writes.write(idempotency: idempotency) { transaction in
            let post = try await repository.create(new, by: Caller(context.identity), in: transaction)
            return try StoredAnswer(
                status: 201, headers: [.init("Location", "/api/posts/\(post.id)"), .init("ETag", Self.etag(post))], json: post)
        }
    }

    @Sendable func update(_ request: Request, context: AuthenticatedRequestContext) async throws -> Response {
        let id = try context.parameters.require("id")
        let body = try await request.decodeJSON(as: UpdatePostRequest.self, context: context)
        let changes = try body.validated()
        let ifMatch = Self.ifMatchVersions(request)
        let outcome = try await writes.write { transaction in
            try await repository.update(id: id, changes, by: Caller(context.identity), ifMatch: ifMatch, in: transaction)
        }
        switch outcome {
        case .updated(let post):
            return try EditedResponse(headers: [.eTag: Self.etag(post)], response: post).response(from: request, context: context)
        case .stale(let post):
            return try EditedResponse(status: .preconditionFailed, headers: [.eTag: Self.etag(post)], response: post)
                .response(from: request, context: context)
        }
    }

    @Sendable func delete(_ request: Request, context: AuthenticatedRequestContext) async throws -> Message {
        let id = try context.parameters.require("id")
        try await writes.write { try await repository.delete(id: id, by: Caller(context.identity), in: $0) }
        return Message("Post deleted")
    }

    // MARK: - Likes

    @Sendable func like(_ request: Request, context: AuthenticatedRequestContext) async throws -> Message {
        let id = try context.parameters.require("id")
        try await writes.write { try await repository.setLiked(true, id: id, by: Caller(context.identity), in: $0) }
        return Message("Post liked")
    }

    @Sendable func unlike(_ request: Request, context: AuthenticatedRequestContext) async throws -> Message {
        let id = try context.parameters.require("id")
        try await writes.write { try await repository.setLiked(false, id: id, by: Caller(context.identity), in: $0) }
        return Message("Post unliked")
    }

    @Sendable func likeStatus(_ request: Request, context: AuthenticatedRequestContext) async throws -> LikeStatus {
        LikeStatus(liked: try await repository.isLiked(id: try context.parameters.require("id"), by: Caller(context.identity)))
    }
}

extension Caller {
    init(_ identity: Identity) {
        self.init(userId: identity.userId, name: identity.name)
    }
}
