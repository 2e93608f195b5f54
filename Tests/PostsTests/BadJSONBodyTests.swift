import Foundation
import HTTPTypes
import NIOCore
import PostlyModels
import PostsService
import Testing
import TestSupport

/// The shared table of bad bodies against every JSON route of the posts service.
@Suite struct BadJSONBodyTests {
    @Test func everyJSONRouteAnswers400AndChangesNothing() async throws {
        try await withPostsService { api in
            let ada = try await api.user("Ada Lovelace")
            let post = try await api.create("Kept", content: "As it was.", as: ada)
            for (method, route) in [(HTTPRequest.Method.post, "/api/posts"), (.put, "/api/posts/\(post.id)")] {
                for bad in BadJSONBodies.all {
                    let answer = try await api.harness.client.execute(
                        uri: route, method: method, headers: [.contentType: "application/json", .authorization: "Bearer \(ada.token)"],
                        body: ByteBuffer(bytes: bad.bytes))
                    #expect(answer.status == .badRequest, "\(route): \(bad.problem)")
                    #expect(answer.headers[.contentType] == "application/problem+json", "\(route): \(bad.problem)")
                }
            }
            let after = try await api.request(.get, "/api/posts/\(post.id)").post()
            #expect(after.version == 1 && after.title == "Kept")
            #expect(try await api.request(.get, "/api/posts").page().posts.count == 1)
        }
    }
}
