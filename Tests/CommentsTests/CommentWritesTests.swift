import Foundation
import HummingbirdTesting
import PostlyEvents
import PostlyModels
import Synchronization
import Testing
import TestSupport

@testable import CommentsService

/// `Idempotency-Key` on comment creation, through the shared write unit: the first answer,
/// byte for byte, whatever happened since.
@Suite struct CommentIdempotencyTests {
    @Test func aRetryAfterTheCommentOrItsPostWasDeletedAnswersTheFirst201ByteForByte() async throws {
        try await CommentsTestService.run { service, client in
            let ada = try await service.user("Ada")
            let postId = try await service.seedPost(by: ada)
            let first = try await client.postComment(postId, content: "kept", as: ada, idempotencyKey: "k")
            #expect(first.status == .created)
            let comment = try first.decode(Comment.self)

            #expect(try await client.deleteComment(comment.id, of: postId, as: ada).status == .ok)
            let afterCommentDelete = try await client.postComment(postId, content: "kept", as: ada, idempotencyKey: "k")
            #expect(afterCommentDelete.status == .created)
            #expect(afterCommentDelete.data == first.data)
            #expect(afterCommentDelete.headers[.location] == first.headers[.location])

            try await service.apply(postEvent(.deleted, id: postId, authorId: ada.id, sequence: 2))
            let afterPostDelete = try await client.postComment(postId, content: "kept", as: ada, idempotencyKey: "k")
            #expect(afterPostDelete.status == .created)
            #expect(afterPostDelete.data == first.data)
            #expect(try await service.commentCount(postId: postId) == 0, "nothing was created again")
        }
    }

    @Test func twentyConcurrentRequestsWithOneKeyCreateOneComment() async throws {
        try await CommentsTestService.run { service, client in
            let ada = try await service.user("Ada")
            let postId = try await service.seedPost(by: ada)
            let answers = try await withThrowingTaskGroup(of: (UInt, Data).self) { group in
                for _ in 0..<20 {
                    group.addTask {
                        let response = try await client.postComment(postId, content: "queued", as: ada, idempotencyKey: "same")
                        return (UInt(response.status.code), response.data)
                    }
                }
                return try await group.reduce(into: [(UInt, Data)]()) { $0.append($1) }
            }
            #expect(answers.allSatisfy { $0.0 == 201 || $0.0 == 409 }, "\(answers.map(\.0))")
            #expect(Set(answers.filter { $0.0 == 201 }.map(\.1)).count == 1, "every 201 is the first answer")
            #expect(try await service.commentCount(postId: postId) == 1)
        }
    }

    @Test func aKeyIsForgottenAfterItsTwentyFourHours() async throws {
        try await CommentsTestService.run { service, client in
            let ada = try await service.user("Ada")
            let postId = try await service.seedPost(by: ada)
            #expect(try await client.postComment(postId, content: "one", as: ada, idempotencyKey: "day").status == .created)
            service.clock.advance(by: 24 * 3600 + 1)
            let purged = try await WriteUnit(database: service.database, producer: "comments", clock: service.clock.now, logger: testLogger)
                .purgeExpiredAnswers()
            #expect(purged == 1)
            #expect(try await client.postComment(postId, content: "two", as: ada, idempotencyKey: "day").status == .created)
            #expect(try await service.commentCount(postId: postId) == 2)
        }
    }
}
