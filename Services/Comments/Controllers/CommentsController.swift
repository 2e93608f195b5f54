import Foundation
import HTTPTypes
import Hummingbird
import PostlyEvents
import PostlyModels
import PostlyService

/// `GET`, `POST /api/posts/{postId}/comments` and `DELETE /api/posts/{postId}/comments/{commentId}`.
struct CommentsController: Sendable {
    let repository: any CommentRepository
    let posts: PostLookup
    let writes: WriteUnit

    /// The contract's bounds of a comment, in characters after trimming.
    static let contentLimit = TextLimit(characters: 5_000)

    func addRoutes(to router: Router<PostlyRequestContext>) {
        router.get("api/posts/:postId/comments", use: list)
        let commenting = router.authenticated("api/posts/:postId/comments")
        commenting.post(use: create)
        commenting.delete(":commentId", use: delete)
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

    @Sendable func create(_ request: Request, context: AuthenticatedRequestContext) async throws -> StoredAnswer {
        let identity = context.identity
        let postId = try postId(context)
        var request = request
        let idempotency = try await IdempotencyKey.from(&request, userId: identity.userId)
        let body = try await request.decodeJSON(as: NewComment.self, context: context)
        // A retry is answered before the post is looked up: the first answer stands even
        // after the post or the comment was deleted.
        if let idempotency, let answer = try await writes.storedAnswer(for: idempotency) { return answer }

        let content = (body.content ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        guard body.content != nil, !TextLimit.isBlank(content) else { throw APIError.invalidFields(["content": "must not be empty"]) }
        if let problem = Self.contentLimit.problem(with: content) { throw APIError.invalidFields(["content": problem]) }

        let post = try await posts.visiblePost(id: postId, to: identity, authorization: request.headers[.authorization])
        let picture = try await repository.profilePicture(userId: identity.userId)
        let author = Author(userId: identity.userId, name: identity.name, profilePicture: picture)
        return try await writes.write(idempotency: idempotency) { transaction in
            let created = try await repository.create(content: content, by: author, on: post, in: transaction)
            return try StoredAnswer(
                status: 201, headers: [.init("Location", "/api/posts/\(created.postId)/comments/\(created.id)")], json: created)
        }
    }

    @Sendable func delete(_ request: Request, context: AuthenticatedRequestContext) async throws -> Message {
        let identity = context.identity
        let commentId = try context.parameters.require("commentId")
        // A comment's author may take it back from a post since unpublished; anyone else
        // learns nothing of a post they cannot see.
        let post = try await posts.existingPost(id: try postId(context), authorization: request.headers[.authorization])
        do {
            try await writes.write { try await repository.delete(commentId: commentId, on: post, by: identity.userId, in: $0) }
        } catch is CommentError where !post.isVisible(to: identity.userId) {
            throw CommentError.postNotFound
        }
        return Message("Comment deleted")
    }

    // MARK: - Helpers

    func postId(_ context: some RequestContext) throws -> String {
        try context.parameters.require("postId")
    }
}
