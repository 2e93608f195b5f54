import Foundation
import HTTPTypes
import Hummingbird
import PostlyModels
import PostlyService

/// `GET`, `POST /api/posts/{postId}/comments` and `DELETE /api/posts/{postId}/comments/{commentId}`.
struct CommentsController: Sendable {
    let repository: any CommentRepository
    let posts: PostLookup

    /// The contract's bounds of a comment, in characters after trimming.
    static let contentLength = 1...5_000
    static let maxIdempotencyKeyLength = 255

    func addRoutes(to router: Router<PostlyRequestContext>) {
        let comments = router.group("api/posts/:postId/comments")
        comments.get(use: list)
        comments.post(use: create)
        comments.delete(":commentId", use: delete)
    }

    struct NewComment: Decodable {
        var content: String?
    }

    @Sendable func list(_ request: Request, context: PostlyRequestContext) async throws -> [Comment] {
        let page = PageRequest.isRequested(in: request.uri.queryParameters) ? try request.pageRequest() : nil
        let post = try await posts.visiblePost(
            id: try postId(context), to: context.identity, authorization: request.headers[.authorization])
        return try await repository.comments(postId: post.id, page: page)
    }

    @Sendable func create(_ request: Request, context: PostlyRequestContext) async throws -> EditedResponse<Comment> {
        let identity = try context.requireIdentity()
        let postId = try postId(context)
        let idempotencyKey = try Self.idempotencyKey(request)
        let body = try await request.decodeJSON(as: NewComment.self, context: context)
        let requestContent = body.content ?? ""

        if let idempotencyKey, let answer = try await repository.idempotentAnswer(userId: identity.userId, key: idempotencyKey) {
            return try Self.replay(answer, postId: postId, content: requestContent)
        }
        let content = requestContent.trimmingCharacters(in: .whitespacesAndNewlines)
        guard body.content != nil, !content.isEmpty else { throw APIError.invalidFields(["content": "must not be empty"]) }
        guard content.count <= Self.contentLength.upperBound else {
            throw APIError.invalidFields(["content": "must be at most \(Self.contentLength.upperBound) characters"])
        }

        let post = try await posts.visiblePost(id: postId, to: identity, authorization: request.headers[.authorization])
        let picture = try await repository.profilePicture(userId: identity.userId)
        let comment = Comment(
            id: UUID().uuidString.lowercased(), postId: post.id, content: content,
            author: Author(userId: identity.userId, name: identity.name, profilePicture: picture),
            createdAt: Self.wholeMilliseconds(Date()))
        switch try await repository.create(comment, on: post, idempotencyKey: idempotencyKey, requestContent: requestContent) {
        case .created(let comment):
            return Self.created(comment)
        case .keyTaken:
            // A concurrent request with the same key won; answer what it answered.
            guard let idempotencyKey, let answer = try await repository.idempotentAnswer(userId: identity.userId, key: idempotencyKey)
            else { throw APIError.conflict("The Idempotency-Key is in use by another request") }
            return try Self.replay(answer, postId: postId, content: requestContent)
        }
    }

    @Sendable func delete(_ request: Request, context: PostlyRequestContext) async throws -> Message {
        let identity = try context.requireIdentity()
        let commentId = try context.parameters.require("commentId")
        let post = try await posts.visiblePost(
            id: try postId(context), to: identity, authorization: request.headers[.authorization])
        try await repository.delete(commentId: commentId, on: post, by: identity.userId)
        return Message("Comment deleted")
    }

    // MARK: - Helpers

    func postId(_ context: PostlyRequestContext) throws -> String {
        try context.parameters.require("postId")
    }

    static func created(_ comment: Comment) -> EditedResponse<Comment> {
        EditedResponse(status: .created, headers: [.location: "/api/posts/\(comment.postId)/comments/\(comment.id)"], response: comment)
    }

    /// The first answer again for a retry; 422 when the key came with another request.
    static func replay(_ answer: IdempotentAnswer, postId: String, content: String) throws -> EditedResponse<Comment> {
        guard answer.postId == postId, answer.requestContent == content else {
            throw APIError.invalidFields(["Idempotency-Key": "was already used with a different request"])
        }
        return created(answer.comment)
    }

    static func idempotencyKey(_ request: Request) throws -> String? {
        guard let key = request.headers[.idempotencyKey] else { return nil }
        guard (1...maxIdempotencyKeyLength).contains(key.count) else {
            throw APIError.badRequest("Idempotency-Key must be 1 to \(maxIdempotencyKeyLength) characters")
        }
        return key
    }

    /// What the clients see (milliseconds), so the answer, the stored row and the event agree.
    static func wholeMilliseconds(_ date: Date) -> Date {
        Date(timeIntervalSince1970: (date.timeIntervalSince1970 * 1000).rounded(.down) / 1000)
    }
}

extension HTTPField.Name {
    static let idempotencyKey = Self("Idempotency-Key")!
}
