import Foundation
import HTTPTypes
import HummingbirdTesting
import PostlyModels
import Testing
import TestSupport

@testable import CommentsService

/// A post the projection does not know yet is asked of the posts service.
@Suite struct PostsServiceFallbackTests {
    @Test func aCommentRightAfterItsPostWasCreatedSucceeds() async throws {
        let posts = FakePostsService()
        try await posts.run { postsURL in
            try await CommentsTestService.run(postsURL: postsURL) { service, client in
                let author = try await service.user("Ada")
                let reader = try await service.user("Grace")
                let post = FakePostsService.post(authorId: author.id, title: "Just now")
                posts.add(post)

                let response = try await client.postComment(post.id, content: "first!", as: reader)
                #expect(response.status == .created)
                #expect(posts.authorizations.withLock { $0 } == ["Bearer \(reader.token)"])
                #expect(try await client.listComments(post.id).decode([Comment].self).map(\.content) == ["first!"])

                let event = try #require(try await service.outboxEvents().first)
                guard case .commentCreated(let snapshot) = event.data else { Issue.record("not comment.created"); return }
                #expect(snapshot.postTitle == "Just now")
                #expect(snapshot.postAuthorId == author.id)

                // The post's author may delete it although the projection still does not know the post.
                let commentId = try response.decode(Comment.self).id
                #expect(try await client.deleteComment(commentId, of: post.id, as: author).status == .ok)
            }
        }
    }

    @Test func aDraftAnsweredByThePostsServiceIsForItsAuthorOnly() async throws {
        let posts = FakePostsService()
        try await posts.run { postsURL in
            try await CommentsTestService.run(postsURL: postsURL) { service, client in
                let author = try await service.user("Ada")
                let other = try await service.user("Grace")
                let draft = FakePostsService.post(authorId: author.id, status: .draft)
                posts.add(draft)
                #expect(try await client.postComment(draft.id, content: "peek", as: other).status == .notFound)
                #expect(try await client.listComments(draft.id).status == .notFound)
                #expect(try await client.postComment(draft.id, content: "mine", as: author).status == .created)
            }
        }
    }

    /// A draft published (or a scheduled post come due) whose event has not arrived: the posts
    /// service has the last word (everyone but its author got 404 until the event came).
    @Test func aPostPublishedSinceItsLastEventIsCommentable() async throws {
        let posts = FakePostsService()
        try await posts.run { postsURL in
            try await CommentsTestService.run(postsURL: postsURL) { service, client in
                let author = try await service.user("Ada")
                let reader = try await service.user("Grace")
                let id = try await service.seedPost(by: author, status: .draft, title: "Soon")
                #expect(try await client.postComment(id, content: "peek", as: reader).status == .notFound)
                posts.add(FakePostsService.post(id: id, authorId: author.id, title: "Soon"))
                #expect(try await client.postComment(id, content: "first!", as: reader).status == .created)
                #expect(try await client.listComments(id).decode([Comment].self).map(\.content) == ["first!"])
            }
        }
    }

    /// A draft of another's, with the posts service down: 404 as the projection has it, not 503.
    @Test func aDraftStaysHiddenWhileThePostsServiceIsDown() async throws {
        try await CommentsTestService.run { service, client in
            let id = try await service.seedPost(by: try await service.user("Ada"), status: .draft)
            let reader = try await service.user("Grace")
            #expect(try await client.postComment(id, content: "peek", as: reader).status == .notFound)
            #expect(try await client.listComments(id).status == .notFound)
        }
    }

    @Test func anUnreachablePostsServiceAnswers503ForUnknownPostsOnly() async throws {
        // The default posts URL of the test service is a closed port.
        try await CommentsTestService.run { service, client in
            let user = try await service.user("Ada")
            let started = ContinuousClock.now
            let unknown = try await client.postComment(UUID().uuidString.lowercased(), content: "hi", as: user)
            #expect(unknown.status == .serviceUnavailable)
            #expect(unknown.headers[.retryAfter] != nil)
            #expect(unknown.problem?.detail.contains("127.0.0.1") == false)
            #expect(started.duration(to: .now) < .seconds(3))
            #expect(try await client.listComments(UUID().uuidString.lowercased()).status == .serviceUnavailable)

            let known = try await service.seedPost(by: user)
            #expect(try await client.postComment(known, content: "hi", as: user).status == .created)
        }
    }

    @Test func aFailingPostsServiceAnswers503() async throws {
        let posts = FakePostsService(failWith: 500)
        try await posts.run { postsURL in
            try await CommentsTestService.run(postsURL: postsURL) { service, client in
                let user = try await service.user("Ada")
                let response = try await client.postComment("some-post", content: "hi", as: user)
                #expect(response.status == .serviceUnavailable)
                #expect(response.headers[.retryAfter] != nil)
            }
        }
    }
}
