import Foundation
import PostlyModels
@testable import PostsService
import Testing
import TestSupport

/// `POST /internal/import/posts` and `/internal/import/likes`: only with the import token,
/// insert-only, kept as the earlier deployment had them, announced once as imported.
@Suite struct ImportTests {
    static let authorId = "65f1a2b3c4d5e6f708192a3b"

    /// A post as `postly-import` sends it.
    static func post(
        _ id: String, title: String = "Crème brûlée", slug: String = "creme-brulee", status: String = "published",
        content: String = String(repeating: "word ", count: 500), views: Int = 42, authorId: String = authorId
    ) -> [String: Any] {
        [
            "_id": id, "title": title, "content": content, "status": status, "slug": slug, "coverImage": NSNull(),
            "author": ["userId": authorId, "name": "Ada Lovelace", "profilePicture": NSNull()],
            "createdAt": "2026-02-14T10:20:30.123Z", "updatedAt": "2026-02-15T08:00:00.000Z",
            "publishedAt": status == "published" ? "2026-02-14T10:20:30.123Z" : NSNull(), "views": views,
        ]
    }

    static func posts(_ posts: [[String: Any]], aliases: [[String: String]] = []) -> String {
        ImportTesting.json(["posts": posts, "aliases": aliases])
    }

    @Test func theRoutesDoNotExistWithoutTheImportToken() async throws {
        try await withPostsService { api in
            for path in ["/internal/import/posts", "/internal/import/likes"] {
                let answer = try await api.harness.importBatch(path, json: Self.posts([Self.post("65f1a2b3c4d5e6f708192a01")]))
                #expect(answer.status == .notFound, "\(path)")
            }
            #expect(try await api.database.query("SELECT id FROM posts").isEmpty)
        }
    }

    @Test func aWrongOrMissingTokenIsUnauthorizedAndChangesNothing() async throws {
        try await withPostsService(importToken: ImportTesting.token) { api in
            for token in ["wrong", ImportTesting.token + "x", nil] as [String?] {
                let answer = try await api.harness.importBatch(
                    "/internal/import/posts", json: Self.posts([Self.post("65f1a2b3c4d5e6f708192a01")]), token: token)
                #expect(answer.status == .unauthorized)
                #expect(answer.problem?.code == "unauthorized")
            }
            // However the path is spelled, no post gets past the gate without the token.
            for path in [
                "/%69nternal/import/posts", "//internal/import/posts", "/internal//import/posts", "/internal/import/posts/", "/./internal/import/posts",
                "/internal/./import/posts", "/INTERNAL/import/posts",
            ] {
                let answer = try await api.harness.importBatch(path, json: Self.posts([Self.post("65f1a2b3c4d5e6f708192a01")]), token: nil)
                #expect(answer.status == .unauthorized || answer.status == .notFound, "\(path): \(answer.status)")
            }
            // An access token is no import token either.
            let ada = try await api.user("Ada Lovelace")
            let answer = try await api.request(
                .post, "/internal/import/posts", as: ada, json: Self.posts([Self.post("65f1a2b3c4d5e6f708192a01")]))
            #expect(answer.status == .unauthorized)
            #expect(try await api.database.query("SELECT id FROM posts").isEmpty)
        }
    }

    @Test func postsAreKeptAsTheyWereAndASecondRunChangesNothingEvenAfterAnEdit() async throws {
        try await withPostsService(importToken: ImportTesting.token) { api in
            let (published, draft) = ("65f1a2b3c4d5e6f708192a01", "65f1a2b3c4d5e6f708192a02")
            let mergedId = "65f1a2b3c4d5e6f708192aff"
            let batch = Self.posts(
                [Self.post(published), Self.post(draft, title: "Notes", slug: "notes", status: "draft", content: "Just *this*.", views: 0)],
                aliases: [["from": mergedId, "to": Self.authorId]])
            let first = try await api.harness.importBatch("/internal/import/posts", json: batch)
            #expect(first.status == .ok)
            #expect(try first.importOutcome() == ImportOutcome(created: 2, existing: 0, rejected: []))

            let post = try await api.request(.get, "/api/posts/\(published)").post()
            #expect(post.slug == "creme-brulee" && post.views == 42 + 1 && post.readTime == 2)
            #expect(Timestamp.format(post.createdAt) == "2026-02-14T10:20:30.123Z")
            #expect(Timestamp.format(post.updatedAt) == "2026-02-15T08:00:00.000Z")
            #expect(post.publishedAt == post.createdAt && post.contentHtml?.hasPrefix("<p>word word") == true)
            #expect(try await api.request(.get, "/api/posts/slug/creme-brulee").post().id == published)
            // The draft is its author's only; the lists and their totals count the published one.
            #expect(try await api.request(.get, "/api/posts/\(draft)").status == .notFound)
            let ada = try await api.user("Ada Lovelace", id: Self.authorId)
            let ownDraft = try await api.request(.get, "/api/posts/\(draft)", as: ada).post()
            #expect(ownDraft.status == .draft && ownDraft.publishedAt == nil && ownDraft.contentHtml == "<p>Just <em>this</em>.</p>\n")
            let feed = try await api.request(.get, "/api/posts").page()
            #expect(feed.posts.map(\.id) == [published] && feed.pagination.total == 1)
            // The merged user's old id lists the survivor's posts.
            let merged = try await api.request(.get, "/api/users/\(mergedId)/posts").page()
            #expect(merged.posts.map(\.id) == [published] && merged.pagination.total == 1)
            let changes = try await api.database.query("SELECT id FROM changes WHERE kind = 'post' ORDER BY id").map { try $0.decode("id", as: String.self) }
            #expect(changes == [published, draft])

            // Edited since: a second run leaves the edit alone and announces nothing.
            let edited = try await api.request(.put, "/api/posts/\(published)", as: ada, json: #"{"title":"Crème brûlée, revised"}"#)
            #expect(edited.status == .ok)
            let second = try await api.harness.importBatch("/internal/import/posts", json: batch)
            #expect(try second.importOutcome() == ImportOutcome(created: 0, existing: 2, rejected: []))
            let after = try await api.request(.get, "/api/posts/\(published)").post()
            #expect(after.title == "Crème brûlée, revised" && after.version == 2)
            #expect(try await api.request(.get, "/api/posts").page().pagination.total == 1)

            let events = try await ImportTesting.outboxEvents(in: api.database)
            let created = events.filter { $0.type == .postCreated }
            #expect(created.map(\.key).sorted() == [published, draft])
            #expect(created.allSatisfy { $0.imported })
            #expect(events.filter { $0.type == .postUpdated }.allSatisfy { !$0.imported })
        }
    }

    @Test func aPostDeletedSinceItsImportStaysDeleted() async throws {
        try await withPostsService(importToken: ImportTesting.token) { api in
            let id = "65f1a2b3c4d5e6f708192a01"
            let batch = Self.posts([Self.post(id)])
            #expect(try await api.harness.importBatch("/internal/import/posts", json: batch).importOutcome().created == 1)
            let ada = try await api.user("Ada Lovelace", id: Self.authorId)
            #expect(try await api.request(.delete, "/api/posts/\(id)", as: ada).status == .ok)
            #expect(try await api.harness.importBatch("/internal/import/posts", json: batch).importOutcome().existing == 1)
            #expect(try await api.request(.get, "/api/posts/\(id)").status == .notFound)
            // Still after its change-feed tombstone is purged (CHANGES_TOMBSTONE_DAYS later).
            #expect(try await ChangeFeed(database: api.database, logger: testLogger).purgeTombstones(before: Date().addingTimeInterval(60)) >= 1)
            #expect(try await api.harness.importBatch("/internal/import/posts", json: batch).importOutcome().existing == 1)
            #expect(try await api.request(.get, "/api/posts/\(id)").status == .notFound)
        }
    }

    @Test func aLikeTakenBackSinceItsImportStaysTakenBack() async throws {
        try await withPostsService(importToken: ImportTesting.token) { api in
            let id = "65f1a2b3c4d5e6f708192a01"
            _ = try await api.harness.importBatch("/internal/import/posts", json: Self.posts([Self.post(id)]))
            let ann = try await api.user("Ann", id: "ann")
            let batch = ImportTesting.json(["likes": [["postId": id, "userId": "ann", "createdAt": "2026-02-14T11:00:00.5+00:00"]]])
            #expect(try await api.harness.importBatch("/internal/import/likes", json: batch).importOutcome().created == 1)
            #expect(try await api.request(.delete, "/api/posts/\(id)/like", as: ann, headers: [.contentType: "application/json"]).status == .ok)
            let again = try await api.harness.importBatch("/internal/import/likes", json: batch).importOutcome()
            #expect(again.created == 0 && again.existing == 1)
            #expect(try await api.request(.get, "/api/posts/\(id)").post().likes == 0)
        }
    }

    @Test func aSlugAPostHereHoldsGetsASuffixAndBadPostsAreRejected() async throws {
        try await withPostsService(importToken: ImportTesting.token) { api in
            let bob = try await api.user("Bob")
            let local = try await api.create("Crème brûlée", as: bob)
            #expect(local.slug == "creme-brulee")
            let answer = try await api.harness.importBatch(
                "/internal/import/posts",
                json: Self.posts([
                    Self.post("65f1a2b3c4d5e6f708192a01"), Self.post("65f1a2b3c4d5e6f708192a02", slug: "x", status: "archived"),
                    Self.post("65f1a2b3c4d5e6f708192a03", slug: "y").merging(["coverImage": "javascript:alert(1)"]) { $1 },
                ]))
            let outcome = try answer.importOutcome()
            #expect(outcome.created == 1 && outcome.rejected.map(\.id) == ["65f1a2b3c4d5e6f708192a02", "65f1a2b3c4d5e6f708192a03"])
            // Views the service could not count on from (the next read's view overflowed).
            let huge = try await api.harness.importBatch("/internal/import/posts", json: Self.posts([Self.post("65f1a2b3c4d5e6f708192a04", slug: "z", views: Int.max)]))
            #expect(try huge.importOutcome().rejected.map(\.id) == ["65f1a2b3c4d5e6f708192a04"])
            #expect(try await api.request(.get, "/api/posts/65f1a2b3c4d5e6f708192a01").post().slug == "creme-brulee-2")
        }
    }

    /// A post, a like or an alias the database cannot hold (an id of kilobytes, a NUL) or whose
    /// id cannot name it (a space: its instances' change lines split there, and it stayed cached
    /// as it was) is that document's rejection; the batch failed with it (500, or 400).
    @Test func aPostOrLikeTheDatabaseCannotHoldIsRejectedAlone() async throws {
        try await withPostsService(importToken: ImportTesting.token) { api in
            let fine = "65f1a2b3c4d5e6f708192a01"
            // Past what a key holds even compressed (a repeated letter compresses to a few bytes).
            let incompressible = (0..<200).map { _ in UUID().uuidString }.joined()
            let posts = try await api.harness.importBatch(
                "/internal/import/posts",
                json: Self.posts([
                    Self.post(String(repeating: "p", count: 3_000), slug: "a"), Self.post("nul-title", title: "Crème\u{0}", slug: "b"),
                    Self.post("legacy 42", slug: "c"), Self.post("65f1a2b3c4d5e6f708192a02", slug: String(repeating: "long-", count: 600)),
                    Self.post(fine),
                ], aliases: [["from": incompressible, "to": Self.authorId], ["from": "merged", "to": Self.authorId]])
            ).importOutcome()
            #expect(posts.created == 1)
            #expect(posts.rejected.map(\.reason) == [
                "from is longer than 255 bytes", "_id is longer than 255 bytes", "title must not contain NUL characters",
                "_id contains a space or a control character", "slug is longer than 255 bytes",
            ])
            #expect(try await api.request(.get, "/api/users/merged/posts").page().posts.map(\.id) == [fine])
            func like(_ userId: String) -> [String: String] { ["postId": fine, "userId": userId, "createdAt": "2026-02-14T11:00:00.5+00:00"] }
            let likes = try await api.harness.importBatch(
                "/internal/import/likes", json: ImportTesting.json(["likes": [like(String(repeating: "u", count: 3_000)), like("ann\u{0}"), like("ann")]])
            ).importOutcome()
            #expect(likes.created == 1)
            #expect(likes.rejected.map(\.reason) == ["userId is longer than 255 bytes", "userId contains a space or a control character"])
            #expect(try await api.request(.get, "/api/posts/\(fine)").post().likes == 1)
        }
    }

    @Test func batchesOverTheLimitsAreRefusedAndChangeNothing() async throws {
        try await withPostsService(importToken: ImportTesting.token) { api in
            let tooMany = Self.posts((0..<501).map { Self.post(String(format: "65f1a2b3c4d5e6f70819%04x", $0), slug: "p\($0)", content: "w") })
            let many = try await api.harness.importBatch("/internal/import/posts", json: tooMany)
            #expect(many.status == .unprocessableContent && many.problem?.code == "too_many_documents")
            let large = Self.posts([Self.post("65f1a2b3c4d5e6f708192a01", content: String(repeating: "x", count: 901 << 10))])
            let tooLarge = try await api.harness.importBatch("/internal/import/posts", json: large)
            #expect(tooLarge.status == .contentTooLarge)
            let likes = ImportTesting.json(["likes": (0..<501).map { ["postId": "p", "userId": "u\($0)", "createdAt": "2026-02-14T10:20:30Z"] }])
            #expect(try await api.harness.importBatch("/internal/import/likes", json: likes).status == .unprocessableContent)
            #expect(try await api.database.query("SELECT id FROM posts").isEmpty)
            #expect(try await ImportTesting.outboxEvents(in: api.database).isEmpty)
        }
    }

    /// A like here that commits while the import's likes are recounted: the counter counts it
    /// (it was counted from before it, one below the rows, for good).
    @Test func aLikeHereDuringTheImportIsCounted() async throws {
        try await withPostsService(importToken: ImportTesting.token) { api in
            let postId = "65f1a2b3c4d5e6f708192a01"
            _ = try await api.harness.importBatch("/internal/import/posts", json: Self.posts([Self.post(postId)]))
            let batch = ImportTesting.json(["likes": [["postId": postId, "userId": "ann", "createdAt": "2026-02-14T11:00:00+00:00"]]])
            // A like, as a request writes it, not committed yet.
            let importing = try await api.database.whileLocked(by: { connection in
                try await connection.execute("SELECT id FROM posts WHERE id = \(postId) FOR NO KEY UPDATE")
                try await connection.execute("INSERT INTO likes (post_id, user_id) VALUES (\(postId), 'carol')")
                try await connection.execute("UPDATE posts SET likes = likes + 1 WHERE id = \(postId)")
            }) {
                let importing = Task { try await api.harness.importBatch("/internal/import/likes", json: batch) }
                let waiting = try await eventually { try await api.database.someoneWaitsForALock() }
                #expect(waiting)
                return importing
            }
            #expect(try await importing.value.importOutcome().created == 1)
            let counted = try await api.database.query("SELECT likes, (SELECT count(*) FROM likes WHERE post_id = id)::int AS rows FROM posts WHERE id = \(postId)")
            #expect(try counted[0].decode("likes", as: Int.self) == 2)
            #expect(try counted[0].decode("rows", as: Int.self) == 2)
        }
    }

    /// A recounted post travels again as an update, so search shows its likes (its import's
    /// event said 0, and search showed 0 until someone liked it here).
    @Test func likesAreRecountedWithoutDuplicatesOrOrphansAndReachSearch() async throws {
        try await withPostsService(importToken: ImportTesting.token) { api in
            let (first, second) = ("65f1a2b3c4d5e6f708192a01", "65f1a2b3c4d5e6f708192a02")
            _ = try await api.harness.importBatch(
                "/internal/import/posts", json: Self.posts([Self.post(first), Self.post(second, slug: "other")]))
            // Liked here before the likes arrive: counted once with them.
            let carol = try await api.user("Carol", id: "carol")
            #expect(try await api.request(.post, "/api/posts/\(second)/like", as: carol).status == .ok)
            func like(_ postId: String, _ userId: String) -> [String: String] {
                ["postId": postId, "userId": userId, "createdAt": "2026-02-14T11:00:00.5+00:00"]
            }
            let batch = ImportTesting.json([
                "likes": [like(first, "ann"), like(first, "ann"), like(first, "bob"), like(second, "carol"), like("65f1a2b3c4d5e6f7081900ff", "dan")]
            ])
            let eventsBefore = try await ImportTesting.outboxEvents(in: api.database).count
            let outcome = try await api.harness.importBatch("/internal/import/likes", json: batch).importOutcome()
            #expect(outcome.created == 2 && outcome.existing == 2 && outcome.rejected.map(\.reason) == ["unknown post"])
            #expect(try await api.request(.get, "/api/posts/\(first)").post().likes == 2)
            #expect(try await api.request(.get, "/api/posts/\(second)").post().likes == 1)
            let again = try await api.harness.importBatch("/internal/import/likes", json: batch).importOutcome()
            #expect(again.created == 0 && again.existing == 4)
            #expect(try await api.request(.get, "/api/posts/\(first)").post().likes == 2)
            let rows = try await api.database.query("SELECT post_id FROM likes").count
            #expect(rows == 3)
            // The first post only: the second's count was already right.
            let updates = try await ImportTesting.outboxEvents(in: api.database).dropFirst(eventsBefore)
            #expect(updates.map(\.key) == [first] && updates.allSatisfy { $0.type == .postUpdated && $0.imported })
            guard case .postUpdated(let snapshot)? = updates.first?.data else { return }
            #expect(snapshot.post.likes == 2 && snapshot.post.title == "Crème brûlée")
        }
    }
}
