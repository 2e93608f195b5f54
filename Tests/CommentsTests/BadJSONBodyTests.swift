import Foundation
import HTTPTypes
import NIOCore
import Testing
import TestSupport

/// The shared table of bad bodies against the comments service's JSON route.
@Suite struct BadJSONBodyTests {
    @Test func creatingACommentAnswers400AndCreatesNothing() async throws {
        try await CommentsTestService.run { service, client in
            let user = try await service.user("Ada")
            let postId = try await service.seedPost(by: user)
            for bad in BadJSONBodies.all {
                let response = try await client.execute(
                    uri: "/api/posts/\(postId)/comments", method: .post,
                    headers: [.contentType: "application/json", .authorization: "Bearer \(user.token)"], body: ByteBuffer(bytes: bad.bytes))
                #expect(response.status == .badRequest, "\(bad.problem)")
                #expect(response.headers[.contentType] == "application/problem+json", "\(bad.problem)")
            }
            #expect(try await service.commentCount(postId: postId) == 0)
            #expect(try await service.outboxEvents().isEmpty)
        }
    }
}
