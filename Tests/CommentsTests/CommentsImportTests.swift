import Foundation
import PostlyModels
import Testing
import TestSupport

@testable import CommentsService

/// `POST /internal/import/comments`: only with the import token, insert-only, announced once
/// as imported, and patient with posts whose events have not arrived yet.
@Suite struct CommentsImportTests {
    static func comment(_ id: String, postId: String, content: String = "Torch on low.", at createdAt: String = "2026-02-14T10:21:00.123456+00:00") -> [String: Any] {
        [
            "_id": id, "postId": postId, "content": content, "createdAt": createdAt,
            "author": ["userId": "65f1a2b3c4d5e6f708192a3c", "name": "Grace Hopper", "profilePicture": NSNull()],
        ]
    }

    static func batch(_ comments: [[String: Any]]) -> String {
        ImportTesting.json(["comments": comments])
    }

    @Test func theRouteDoesNotExistWithoutTheImportToken() async throws {
        try await CommentsTestService.run { service, _ in
            let answer = try await service.harness.importBatch("/internal/import/comments", json: Self.batch([Self.comment("c1", postId: "p1")]))
            #expect(answer.status == .notFound)
        }
    }

    @Test func aWrongTokenIsUnauthorized() async throws {
        try await CommentsTestService.run(importToken: ImportTesting.token) { service, _ in
            let author = try await service.user("Ada")
            let postId = try await service.seedPost(by: author)
            for token in ["wrong", nil] as [String?] {
                let answer = try await service.harness.importBatch(
                    "/internal/import/comments", json: Self.batch([Self.comment("c1", postId: postId)]), token: token)
                #expect(answer.status == .unauthorized && answer.json["code"] as? String == "unauthorized")
            }
            #expect(try await service.commentCount(postId: postId) == 0)
        }
    }

    /// An imported time keeps its millisecond: a parsed `.002` is 0.00199999..., which was cut
    /// to `.001` (about one time in nine) in the stored row, the answer and the event.
    @Test func anImportedTimeKeepsItsMillisecond() async throws {
        try await CommentsTestService.run(importToken: ImportTesting.token) { service, client in
            let author = try await service.user("Ada")
            let postId = try await service.seedPost(by: author)
            let milliseconds = ["002", "009", "015", "022", "123"]
            let batch = Self.batch(milliseconds.enumerated().map { index, millisecond in
                Self.comment("65f1a2b3c4d5e6f708192c0\(index)", postId: postId, at: "2024-03-05T10:20:30.\(millisecond)+00:00")
            })
            #expect(try await service.harness.importBatch("/internal/import/comments", json: batch).status == .ok)
            let comments = try await client.listComments(postId, as: author).decode([Comment].self)
            #expect(comments.map { Timestamp.format($0.createdAt) } == milliseconds.map { "2024-03-05T10:20:30.\($0)Z" })
        }
    }

    /// Comments of the same millisecond list in id order, as the posts service embeds them in
    /// the post (they listed in the order they were stored).
    @Test func commentsOfTheSameMomentListInTheOrderThePostShowsThem() async throws {
        try await CommentsTestService.run(importToken: ImportTesting.token) { service, client in
            let author = try await service.user("Ada")
            let postId = try await service.seedPost(by: author)
            let ids = ["65f1a2b3c4d5e6f708192d03", "65f1a2b3c4d5e6f708192d01", "65f1a2b3c4d5e6f708192d02"]
            let batch = Self.batch(ids.map { Self.comment($0, postId: postId, at: "2024-03-05T10:20:30.500+00:00") })
            #expect(try await service.harness.importBatch("/internal/import/comments", json: batch).status == .ok)
            let comments = try await client.listComments(postId, as: author).decode([Comment].self)
            #expect(comments.map(\.id) == ids.sorted())
        }
    }

    @Test func commentsAreCreatedOnceInOrderAndAnnouncedAsImported() async throws {
        try await CommentsTestService.run(importToken: ImportTesting.token) { service, client in
            let author = try await service.user("Ada")
            let postId = try await service.seedPost(by: author, status: .draft, title: "Notes")
            let batch = Self.batch([
                Self.comment("65f1a2b3c4d5e6f708192b01", postId: postId, content: "First"),
                Self.comment("65f1a2b3c4d5e6f708192b02", postId: postId, content: "Second", at: "2026-02-14T10:22:00+00:00"),
            ])
            let first = try await service.harness.importBatch("/internal/import/comments", json: batch)
            #expect(first.status == .ok)
            #expect(try first.importOutcome() == ImportOutcome(created: 2, existing: 0, rejected: []))
            let comments = try await client.listComments(postId, as: author).decode([Comment].self)
            #expect(comments.map(\.content) == ["First", "Second"])
            #expect(Timestamp.format(comments[0].createdAt) == "2026-02-14T10:21:00.123Z")

            // Changed since: a second run leaves it alone.
            try await service.database.execute("UPDATE comments SET content = 'Changed' WHERE id = '65f1a2b3c4d5e6f708192b01'")
            let second = try await service.harness.importBatch("/internal/import/comments", json: batch)
            #expect(try second.importOutcome() == ImportOutcome(created: 0, existing: 2, rejected: []))
            #expect(try await client.listComments(postId, as: author).decode([Comment].self).map(\.content) == ["Changed", "Second"])

            let events = try await service.outboxEvents()
            #expect(events.map(\.type) == [.commentCreated, .commentCreated])
            #expect(events.allSatisfy { $0.imported && $0.key == postId })
            #expect(events.map(\.sequence) == [1, 2])
            guard case .commentCreated(let snapshot) = events[0].data else { Issue.record("not comment.created"); return }
            #expect(snapshot.postAuthorId == author.id && snapshot.postTitle == "Notes")
        }
    }

    /// A comment the database cannot hold (an id of kilobytes, a NUL) or whose id cannot name
    /// it (a space) is that comment's rejection; the batch failed with it (500, or 400), its
    /// other comments with it, and each resume failed again.
    @Test func aCommentTheDatabaseCannotHoldIsRejectedAlone() async throws {
        try await CommentsTestService.run(importToken: ImportTesting.token) { service, _ in
            let postId = try await service.seedPost(by: try await service.user("Ada"))
            let batch = Self.batch([
                Self.comment(String(repeating: "c", count: 3_000), postId: postId),
                Self.comment("nul-content", postId: postId, content: "Torch\u{0} on low."),
                Self.comment("legacy 42", postId: postId),
                Self.comment("65f1a2b3c4d5e6f708192b01", postId: postId),
            ])
            let outcome = try await service.harness.importBatch("/internal/import/comments", json: batch).importOutcome()
            #expect(outcome.created == 1)
            #expect(outcome.rejected.map(\.reason) == [
                "_id is longer than 255 bytes", "content must not contain NUL characters", "_id contains a space or a control character",
            ])
            #expect(try await service.commentCount(postId: postId) == 1)
        }
    }

    @Test func aCommentDeletedSinceItsImportStaysDeleted() async throws {
        try await CommentsTestService.run(importToken: ImportTesting.token) { service, client in
            let author = try await service.user("Ada")
            let postId = try await service.seedPost(by: author, status: .published, title: "Notes")
            let batch = Self.batch([Self.comment("65f1a2b3c4d5e6f708192b01", postId: postId, content: "First")])
            #expect(try await service.harness.importBatch("/internal/import/comments", json: batch).importOutcome().created == 1)
            #expect(try await client.deleteComment("65f1a2b3c4d5e6f708192b01", of: postId, as: author).status == .ok)
            let again = try await service.harness.importBatch("/internal/import/comments", json: batch)
            #expect(try again.importOutcome() == ImportOutcome(created: 0, existing: 1, rejected: []))
            #expect(try await client.listComments(postId, as: author).decode([Comment].self).isEmpty)
            #expect(try await service.outboxEvents().map(\.type) == [.commentCreated, .commentDeleted])
        }
    }

    @Test func aPostWhoseEventIsLateIsWaitedFor() async throws {
        try await FakePostsService().run { postsURL in
            try await CommentsTestService.run(postsURL: postsURL, importToken: ImportTesting.token, importPostWait: .seconds(5)) { service, _ in
                let author = try await service.user("Ada")
                // A draft, whose event arrives a moment after the batch.
                let draftId = UUID().uuidString.lowercased()
                let deletedId = try await service.seedPost(by: author)
                try await service.apply(postEvent(.deleted, id: deletedId, authorId: author.id, sequence: 2))
                async let late: Void = {
                    try await Task.sleep(for: .milliseconds(500))
                    try await service.seedPost(by: author, id: draftId, status: .draft)
                }()
                let answer = try await service.harness.importBatch(
                    "/internal/import/comments", json: Self.batch([Self.comment("c2", postId: draftId), Self.comment("c3", postId: deletedId)]))
                try await late
                let outcome = try answer.importOutcome()
                #expect(outcome.created == 1 && outcome.rejected == [.init(id: "c3", reason: "the post was deleted")])
            }
        }
    }

    /// A read of a post from the posts service counts a view: an import, which keeps the views it
    /// brings, never asks it, even for a published post it shows to anyone (the system test saw
    /// 43 views where the import brought 42).
    @Test func anImportNeverAsksThePostsServiceWhichWouldCountAView() async throws {
        let posts = FakePostsService()
        try await posts.run { postsURL in
            try await CommentsTestService.run(postsURL: postsURL, importToken: ImportTesting.token, importPostWait: .milliseconds(300)) { service, _ in
                let author = try await service.user("Ada")
                let published = FakePostsService.post(authorId: author.id)
                posts.add(published)
                let answer = try await service.harness.importBatch(
                    "/internal/import/comments", json: Self.batch([Self.comment("c1", postId: published.id)]))
                #expect(answer.status == .serviceUnavailable)
                #expect(posts.authorizations.withLock { $0 }.isEmpty)
            }
        }
    }

    /// A post still unknown after the wait is late (a broker down, a consumer behind): the batch
    /// answers 503, for the importer to send again, and creates nothing. Its comments were
    /// rejected, and lost to the import.
    @Test func aPostThatStaysUnknownAnswers503AndCreatesNothing() async throws {
        try await FakePostsService().run { postsURL in
            try await CommentsTestService.run(postsURL: postsURL, importToken: ImportTesting.token, importPostWait: .milliseconds(300)) { service, _ in
                let author = try await service.user("Ada")
                let known = try await service.seedPost(by: author)
                let answer = try await service.harness.importBatch(
                    "/internal/import/comments", json: Self.batch([Self.comment("c1", postId: known), Self.comment("c2", postId: "late")]))
                #expect(answer.status == .serviceUnavailable)
                #expect(answer.headers[.retryAfter] != nil)
                #expect(try await service.commentCount(postId: known) == 0)
                #expect(try await service.outboxEvents().isEmpty)
            }
        }
    }

    @Test func batchesOverTheLimitsAreRefusedAndChangeNothing() async throws {
        try await CommentsTestService.run(importToken: ImportTesting.token) { service, _ in
            let author = try await service.user("Ada")
            let postId = try await service.seedPost(by: author)
            let many = try await service.harness.importBatch(
                "/internal/import/comments", json: Self.batch((0..<501).map { Self.comment("c\($0)", postId: postId) }))
            #expect(many.status == .unprocessableContent)
            let large = try await service.harness.importBatch(
                "/internal/import/comments", json: Self.batch([Self.comment("c1", postId: postId, content: String(repeating: "x", count: 901 << 10))]))
            #expect(large.status == .contentTooLarge)
            #expect(try await service.commentCount(postId: postId) == 0)
        }
    }
}
