import Foundation
import HTTPTypes
import HummingbirdTesting
import PostlyEvents
import PostlyModels
import Testing
import TestSupport

@testable import CommentsService

@Suite struct CommentDeletionTests {
    @Test func theCommentsAuthorAndThePostsAuthorMayDeleteAndNobodyElse() async throws {
        try await CommentsTestService.run { service, client in
            let postAuthor = try await service.user("Ada")
            let commenter = try await service.user("Grace")
            let third = try await service.user("Mallory")
            let postId = try await service.seedPost(by: postAuthor)
            let first = try await client.postComment(postId, content: "one", as: commenter).decode(Comment.self)
            let second = try await client.postComment(postId, content: "two", as: commenter).decode(Comment.self)

            let forbidden = try await client.deleteComment(first.id, of: postId, as: third)
            #expect(forbidden.status == .forbidden)
            #expect(forbidden.problem?.code == "forbidden")
            #expect(try await client.deleteComment(first.id, of: postId, as: nil).status == .unauthorized)
            #expect(try await service.commentCount(postId: postId) == 2)

            let byCommenter = try await client.deleteComment(first.id, of: postId, as: commenter)
            #expect(byCommenter.status == .ok)
            #expect(try byCommenter.decode(Message.self).message.isEmpty == false)
            let byPostAuthor = try await client.deleteComment(second.id, of: postId, as: postAuthor)
            #expect(byPostAuthor.status == .ok)
            #expect(try await service.commentCount(postId: postId) == 0)

            #expect(try await client.deleteComment(first.id, of: postId, as: commenter).status == .notFound)
        }
    }

    @Test func aCommentsAuthorTakesItBackFromAPostSinceUnpublishedAndNobodyElseLearnsOfThePost() async throws {
        try await CommentsTestService.run { service, client in
            let postAuthor = try await service.user("Ada")
            let commenter = try await service.user("Grace")
            let third = try await service.user("Mallory")
            let postId = try await service.seedPost(by: postAuthor)
            let mine = try await client.postComment(postId, content: "mine", as: commenter).decode(Comment.self)
            let theirs = try await client.postComment(postId, content: "theirs", as: third).decode(Comment.self)
            try await service.apply(postEvent(.updated, id: postId, authorId: postAuthor.id, status: .draft, sequence: 2))

            // Not 403: the post is hidden from them.
            #expect(try await client.deleteComment(mine.id, of: postId, as: third).status == .notFound)
            #expect(try await client.deleteComment("no-such-comment", of: postId, as: third).status == .notFound)
            #expect(try await service.commentCount(postId: postId) == 2)

            #expect(try await client.deleteComment(mine.id, of: postId, as: commenter).status == .ok)
            #expect(try await client.listComments(postId, as: postAuthor).decode([Comment].self).map(\.id) == [theirs.id])
            #expect(try await service.outboxEvents().map(\.type) == [.commentCreated, .commentCreated, .commentDeleted])

            try await service.apply(postEvent(.deleted, id: postId, authorId: postAuthor.id, title: "Gone", sequence: 3))
            #expect(try await client.deleteComment(theirs.id, of: postId, as: third).status == .notFound)
        }
    }

    @Test func aCommentOfAnotherPostAnswers404() async throws {
        try await CommentsTestService.run { service, client in
            let author = try await service.user("Ada")
            let postId = try await service.seedPost(by: author)
            let otherPost = try await service.seedPost(by: author)
            let comment = try await client.postComment(postId, content: "one", as: author).decode(Comment.self)

            #expect(try await client.deleteComment(comment.id, of: otherPost, as: author).status == .notFound)
            #expect(try await client.deleteComment("no-such-comment", of: postId, as: author).status == .notFound)
            #expect(try await service.commentCount(postId: postId) == 1)
        }
    }
}

@Suite struct IdempotencyTests {
    @Test func aRetryWithTheSameKeyAnswersTheFirstCommentAndCreatesNothing() async throws {
        try await CommentsTestService.run { service, client in
            let user = try await service.user("Ada")
            let postId = try await service.seedPost(by: user)
            let first = try await client.postComment(postId, content: "once", as: user, idempotencyKey: "k-1")
            #expect(first.status == .created)
            let retry = try await client.postComment(postId, content: "once", as: user, idempotencyKey: "k-1")
            #expect(retry.status == .created)
            #expect(try retry.decode(Comment.self) == first.decode(Comment.self))
            #expect(retry.headers[.location] == first.headers[.location])
            #expect(try await service.commentCount(postId: postId) == 1)
            #expect(try await service.outboxEvents().count == 1)
        }
    }

    @Test func theSameKeyWithAnotherBodyAnswers422() async throws {
        try await CommentsTestService.run { service, client in
            let user = try await service.user("Ada")
            let postId = try await service.seedPost(by: user)
            let otherPost = try await service.seedPost(by: user)
            #expect(try await client.postComment(postId, content: "once", as: user, idempotencyKey: "k").status == .created)
            let different = try await client.postComment(postId, content: "twice", as: user, idempotencyKey: "k")
            #expect(different.status == .unprocessableContent)
            #expect(different.problem?.errors?["Idempotency-Key"] != nil)
            #expect(try await client.postComment(otherPost, content: "once", as: user, idempotencyKey: "k").status == .unprocessableContent)
            #expect(try await service.commentCount(postId: postId) == 1)
            #expect(try await service.commentCount(postId: otherPost) == 0)
        }
    }

    @Test func keysArePerUser() async throws {
        try await CommentsTestService.run { service, client in
            let ada = try await service.user("Ada")
            let grace = try await service.user("Grace")
            let postId = try await service.seedPost(by: ada)
            let first = try await client.postComment(postId, content: "same", as: ada, idempotencyKey: "shared")
            let second = try await client.postComment(postId, content: "same", as: grace, idempotencyKey: "shared")
            #expect(second.status == .created)
            #expect(try first.decode(Comment.self).id != second.decode(Comment.self).id)
            #expect(try await service.commentCount(postId: postId) == 2)
        }
    }

    @Test func concurrentRetriesCreateOneComment() async throws {
        try await CommentsTestService.run { service, client in
            let user = try await service.user("Ada")
            let postId = try await service.seedPost(by: user)
            let ids = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        let response = try await client.postComment(postId, content: "offline queue", as: user, idempotencyKey: "replay")
                        #expect(response.status == .created)
                        return try response.decode(Comment.self).id
                    }
                }
                return try await group.reduce(into: Set<String>()) { $0.insert($1) }
            }
            #expect(ids.count == 1)
            #expect(try await service.commentCount(postId: postId) == 1)
        }
    }

    @Test func anOverlongKeyAnswers400() async throws {
        try await CommentsTestService.run { service, client in
            let user = try await service.user("Ada")
            let postId = try await service.seedPost(by: user)
            let response = try await client.postComment(postId, content: "x", as: user, idempotencyKey: String(repeating: "k", count: 256))
            #expect(response.status == .badRequest)
            #expect(try await service.commentCount(postId: postId) == 0)
        }
    }
}
