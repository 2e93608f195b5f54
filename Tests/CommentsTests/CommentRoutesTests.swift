import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import PostlyModels
import Testing
import TestSupport

@testable import CommentsService

@Suite struct CommentRoutesTests {
    @Test func aNewCommentAnswers201WithTheObjectTheAppDecodes() async throws {
        try await CommentsTestService.run { service, client in
            let author = try await service.user("Ada Lovelace")
            let reader = try await service.user("Grace Hopper")
            let postId = try await service.seedPost(by: author)

            let response = try await client.postComment(postId, content: "  Torch on low, and patience.\n", as: reader)
            #expect(response.status == .created)
            let comment = try response.decode(Comment.self)
            #expect(response.headers[.location] == "/api/posts/\(postId)/comments/\(comment.id)")
            #expect(response.headers[.contentType]?.hasPrefix("application/json") == true)
            #expect(comment.postId == postId)
            #expect(Array(comment.id)[14] == "7", "a version 7 UUID (`UUID.timeOrderedString`): \(comment.id)")
            #expect(comment.content == "Torch on low, and patience.")
            #expect(comment.author == Author(userId: reader.id, name: "Grace Hopper", profilePicture: nil))
            #expect(comment.likes == 0)

            let object = try #require(response.json as? [String: Any])
            #expect(Set(object.keys) == ["_id", "postId", "content", "author", "createdAt", "likes"])
            let authorObject = try #require(object["author"] as? [String: Any])
            #expect(Set(authorObject.keys) == ["userId", "name", "profilePicture"])
            let createdAt = try #require(object["createdAt"] as? String)
            #expect(createdAt.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/) != nil)

            let listed = try await client.listComments(postId)
            #expect(listed.status == .ok)
            #expect(try listed.decode([Comment].self) == [comment])
        }
    }

    @Test func commentsAreListedOldestFirstAsABareArrayAndPaginated() async throws {
        try await CommentsTestService.run { service, client in
            let author = try await service.user("Ada")
            let postId = try await service.seedPost(by: author)
            for text in ["first", "second", "third"] {
                #expect(try await client.postComment(postId, content: text, as: author).status == .created)
            }
            let all = try await client.listComments(postId)
            #expect(all.json is [Any])
            #expect(try all.decode([Comment].self).map(\.content) == ["first", "second", "third"])
            #expect(try await client.listComments(postId, query: "?page=1&limit=2").decode([Comment].self).map(\.content) == ["first", "second"])
            #expect(try await client.listComments(postId, query: "?page=2&limit=2").decode([Comment].self).map(\.content) == ["third"])
            #expect(try await client.listComments(postId, query: "?limit=1").decode([Comment].self).map(\.content) == ["first"])
            #expect(try await client.listComments(postId, query: "?page=3&limit=2").decode([Comment].self).isEmpty)
            for bad in ["?limit=0", "?limit=101", "?page=0", "?page=x"] {
                let response = try await client.listComments(postId, query: bad)
                #expect(response.status == .badRequest, "\(bad)")
                #expect(response.headers[.contentType] == "application/problem+json")
            }
        }
    }

    /// Comments list in the order they commit: one that waited for its post's lock while
    /// another committed sorted before it (its time was taken before the wait), so a reader
    /// paging through saw that other one twice.
    @Test func aCommentThatWaitedForItsPostListsAfterTheOneThatWentFirst() async throws {
        try await CommentsTestService.run { service, client in
            let author = try await service.user("Ada")
            let postId = try await service.seedPost(by: author)
            // Another instance's comment, holding the post's lock while the request waits.
            let waiting = try await service.database.whileLocked(by: {
                try await $0.execute(
                    """
                    INSERT INTO event_sequences (topic, key, sequence) VALUES ('postly.comments', \(postId), 0)
                    ON CONFLICT (topic, key) DO UPDATE SET sequence = event_sequences.sequence
                    """)
            }) {
                let waiting = Task { try await client.postComment(postId, content: "waited", as: author) }
                #expect(try await eventually { try await service.database.someoneWaitsForALock() })
                try await Task.sleep(for: .milliseconds(200))
                return waiting
            } thenCommitting: {
                try await $0.execute(
                    """
                    INSERT INTO comments (id, post_id, content, author_id, author_name, created_at)
                    VALUES (\(UUID.timeOrderedString()), \(postId), 'first', \(author.id), 'Ada', clock_timestamp())
                    """)
            }
            #expect(try await waiting.value.status == .created)
            #expect(try await client.listComments(postId).decode([Comment].self).map(\.content) == ["first", "waited"])
        }
    }

    /// A comment sorts after its post's latest, by time and by id (the posts service lists a
    /// post's comments by both): another instance whose clock runs ahead stored one later than
    /// this instance's now, and the new comment listed before it.
    @Test func aCommentListsAfterOneStampedByAClockThatRunsAhead() async throws {
        try await CommentsTestService.run { service, client in
            let author = try await service.user("Ada")
            let postId = try await service.seedPost(by: author)
            let ahead = Date(timeIntervalSince1970: ((Date().timeIntervalSince1970 + 2) * 1000).rounded(.down) / 1000)
            try await service.database.execute(
                """
                INSERT INTO comments (id, post_id, content, author_id, author_name, created_at)
                VALUES (\(UUID.timeOrderedString(at: ahead)), \(postId), 'ahead', \(author.id), 'Ada', \(ahead))
                """)
            #expect(try await client.postComment(postId, content: "next", as: author).status == .created)
            let listed = try await client.listComments(postId).decode([Comment].self)
            #expect(listed.map(\.content) == ["ahead", "next"])
            #expect(listed[1].createdAt > listed[0].createdAt && listed[1].id > listed[0].id)
        }
    }

    @Test func aPostWithoutCommentsAnswersAnEmptyArray() async throws {
        try await CommentsTestService.run { service, client in
            let postId = try await service.seedPost(by: try await service.user("Ada"))
            let response = try await client.listComments(postId)
            #expect(response.status == .ok)
            #expect(String(buffer: response.body) == "[]")
        }
    }

    @Test func contentOf5000CharactersIsAcceptedAndLongerOrEmptyIs422() async throws {
        try await CommentsTestService.run { service, client in
            let user = try await service.user("Ada")
            let postId = try await service.seedPost(by: user)

            let longest = String(repeating: "é", count: 5_000)
            let accepted = try await client.postComment(postId, content: "  \(longest)  ", as: user)
            #expect(accepted.status == .created)
            #expect(try accepted.decode(Comment.self).content == longest)

            // 5,000 characters of 50 combining marks each would be about 1 MiB.
            let heavy = String(repeating: "a" + String(repeating: "\u{301}", count: 50), count: 5_000)
            for content in [String(repeating: "a", count: 5_001), heavy, "", "   \n\t ", "\u{200B}\u{FEFF} \u{2060}", "a\u{0}b", nil] {
                let response = try await client.postComment(postId, content: content, as: user)
                #expect(response.status == .unprocessableContent)
                #expect(response.problem?.errors?["content"] != nil)
                #expect(response.problem?.code == "validation_failed")
            }
            #expect(try await service.commentCount(postId: postId) == 1)
        }
    }

    @Test func malformedBodiesAnswer4xxAndCreateNothing() async throws {
        try await CommentsTestService.run { service, client in
            let user = try await service.user("Ada")
            let postId = try await service.seedPost(by: user)
            let notJSON = try await client.execute(
                uri: "/api/posts/\(postId)/comments", method: .post,
                headers: [.authorization: "Bearer \(user.token)", .contentType: "application/json"],
                body: ByteBuffer(string: "{\"content\": ")) { $0 }
            #expect(notJSON.status == .badRequest)
            let wrongType = try await client.execute(
                uri: "/api/posts/\(postId)/comments", method: .post,
                headers: [.authorization: "Bearer \(user.token)", .contentType: "text/plain"],
                body: ByteBuffer(string: "hello")) { $0 }
            #expect(wrongType.status == .unsupportedMediaType)
            let numberContent = try await client.execute(
                uri: "/api/posts/\(postId)/comments", method: .post,
                headers: [.authorization: "Bearer \(user.token)", .contentType: "application/json"],
                body: ByteBuffer(string: "{\"content\": 5}")) { $0 }
            #expect(numberContent.status == .unprocessableContent)
            #expect(try await service.commentCount(postId: postId) == 0)
            #expect(try await service.outboxEvents().isEmpty)
        }
    }

    @Test func postingNeedsAValidToken() async throws {
        try await CommentsTestService.run { service, client in
            let postId = try await service.seedPost(by: try await service.user("Ada"))
            #expect(try await client.postComment(postId, content: "hi", as: nil).status == .unauthorized)
            var forged = try await service.user("Mallory")
            forged.token = try await TestTokenIssuer().token(userId: forged.id, name: forged.name)
            #expect(try await client.postComment(postId, content: "hi", as: forged).status == .unauthorized)
            #expect(try await service.commentCount(postId: postId) == 0)
        }
    }

    @Test func aPostNobodyKnowsAnswers404() async throws {
        let posts = FakePostsService()
        try await posts.run { postsURL in
            try await CommentsTestService.run(postsURL: postsURL) { service, client in
                let user = try await service.user("Ada")
                for id in ["does-not-exist", "0123456789abcdef01234567", "%20weird%2Fid"] {
                    let list = try await client.listComments(id, as: user)
                    #expect(list.status == .notFound, "\(id)")
                    #expect(list.problem?.detail == "Post not found")
                    #expect(try await client.postComment(id, content: "hi", as: user).status == .notFound)
                    #expect(try await client.deleteComment("c", of: id, as: user).status == .notFound)
                }
            }
        }
    }

    @Test func draftCommentsAreForTheDraftsAuthorOnly() async throws {
        try await CommentsTestService.run { service, client in
            let author = try await service.user("Ada")
            let other = try await service.user("Grace")
            let draft = try await service.seedPost(by: author, status: .draft)

            let created = try await client.postComment(draft, content: "note to self", as: author)
            #expect(created.status == .created)
            #expect(try await client.listComments(draft, as: author).decode([Comment].self).count == 1)

            #expect(try await client.listComments(draft, as: other).status == .notFound)
            #expect(try await client.listComments(draft).status == .notFound)
            #expect(try await client.postComment(draft, content: "peek", as: other).status == .notFound)
            let commentId = try created.decode(Comment.self).id
            #expect(try await client.deleteComment(commentId, of: draft, as: other).status == .notFound)
            #expect(try await service.commentCount(postId: draft) == 1)

            // Published: everyone sees it.
            try await service.apply(postEvent(.updated, id: draft, authorId: author.id, status: .published, sequence: 2))
            #expect(try await client.listComments(draft).decode([Comment].self).count == 1)
            #expect(try await client.postComment(draft, content: "now I can", as: other).status == .created)
        }
    }

    @Test func aDeletedPostAnswers404AndItsCommentsAreGone() async throws {
        try await CommentsTestService.run { service, client in
            let author = try await service.user("Ada")
            let reader = try await service.user("Grace")
            let postId = try await service.seedPost(by: author)
            #expect(try await client.postComment(postId, content: "one", as: reader).status == .created)
            #expect(try await client.postComment(postId, content: "two", as: author).status == .created)

            try await service.apply(postEvent(.deleted, id: postId, authorId: author.id, sequence: 2))

            #expect(try await service.commentCount(postId: postId) == 0)
            #expect(try await client.listComments(postId, as: author).status == .notFound)
            #expect(try await client.postComment(postId, content: "three", as: author).status == .notFound)
            #expect(try await service.commentCount(postId: postId) == 0)
        }
    }

    @Test func authorNamesFollowUserUpdatedEvents() async throws {
        try await CommentsTestService.run { service, client in
            let author = try await service.user("Ada")
            let commenter = try await service.user("Ada Lovelace")
            let postId = try await service.seedPost(by: author)
            #expect(try await client.postComment(postId, content: "hello", as: commenter).status == .created)

            try await service.apply(
                Event(
                    producer: "auth", key: commenter.id, sequence: 2, actorId: commenter.id,
                    data: .userUpdated(UserSnapshot(userId: commenter.id, name: "Ada King", profilePicture: "https://images.example.test/ada.png"))))

            let listed = try await client.listComments(postId).decode([Comment].self)
            #expect(listed.map(\.author) == [Author(userId: commenter.id, name: "Ada King", profilePicture: "https://images.example.test/ada.png")])
            // New comments carry the known picture too.
            let next = try await client.postComment(postId, content: "again", as: commenter).decode(Comment.self)
            #expect(next.author.profilePicture == "https://images.example.test/ada.png")
        }
    }
}
