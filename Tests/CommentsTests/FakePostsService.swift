import Foundation
import Hummingbird
import Logging
import NIOCore
import PostlyModels
import Synchronization
import TestSupport

/// A stand-in for the posts service on 127.0.0.1 (a port the system picks): answers
/// `GET /api/posts/{id}?countView=false` with the posts it holds, encoded as the posts service
/// encodes them, 404 for others, 400 without `countView=false`, or `failWith` for every request. Records the Authorization headers it got.
final class FakePostsService: Sendable {
    let posts = Mutex<[String: Post]>([:])
    let authorizations = Mutex<[String]>([])
    let failWith: Int?

    init(failWith: Int? = nil) {
        self.failWith = failWith
    }

    func add(_ post: Post) {
        posts.withLock { $0[post.id] = post }
    }

    static func post(id: String = UUID().uuidString.lowercased(), authorId: String, status: PostStatus = .published, title: String = "Fresh post") -> Post {
        let now = Date()
        return Post(
            id: id, title: title, content: "Text", contentHtml: "<p>Text</p>", excerpt: "Text", slug: "fresh-post", status: status,
            coverImage: nil, author: Author(userId: authorId, name: "Author"), views: 0, likes: 0, comments: [], commentsCount: 0,
            readTime: 1, createdAt: now, updatedAt: now, publishedAt: status == .published ? now : nil, version: 1)
    }

    /// Runs the server for the duration of `body`, which gets its base URL.
    func run<T: Sendable>(_ body: @Sendable (String) async throws -> T) async throws -> T {
        let router = Router()
        router.get("api/posts/:id") { request, context -> Response in
            self.authorizations.withLock { $0.append(request.headers[.authorization] ?? "") }
            if let failWith = self.failWith { return Response(status: .init(code: failWith)) }
            // Another service's look at a post must not count as a reader's view.
            guard request.uri.queryParameters.get("countView") == "false" else { return Response(status: .badRequest) }
            let id = try context.parameters.require("id")
            guard let post = self.posts.withLock({ $0[id] }) else { return Response(status: .notFound) }
            let body = try PostlyJSON.encoder().encode(post)
            return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: body)))
        }
        return try await withLoopbackServer(router) { baseURL in try await body(baseURL) }
    }

}
