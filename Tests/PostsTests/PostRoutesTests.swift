import Foundation
import HTTPTypes
import PostlyModels
import PostsService
import Testing
import TestSupport

/// The posts routes of the contract: success and error shapes, decoded as the app decodes.
@Suite struct PostRoutesTests {
    @Test func createAnswers201WithLocationAndEveryKey() async throws {
        try await withPostsService { api in
            let ada = try await api.user("Ada Lovelace")
            let answer = try await api.request(.post, "/api/posts", as: ada, json: #"{"title":"  Crème brûlée  ","content":"Custard, **sugar**.\n\nA torch.","coverImage":"https://img.example.test/a.png"}"#)
            #expect(answer.status == .created)
            let post = try answer.post()
            #expect(answer.headers[.location] == "/api/posts/\(post.id)")
            // A version 7 UUID, so new posts' index entries land together (`UUID.timeOrderedString`).
            #expect(UUID(uuidString: post.id) != nil && Array(post.id)[14] == "7", "\(post.id)")
            #expect(answer.headers[.eTag] == "\"1\"")
            #expect(post.title == "Crème brûlée")
            #expect(post.slug == "creme-brulee")
            #expect(post.status == .published)
            #expect(post.author == Author(userId: ada.id, name: "Ada Lovelace", profilePicture: nil))
            #expect(post.contentHtml?.contains("<strong>sugar</strong>") == true)
            #expect(post.excerpt == "Custard, sugar. A torch.")
            #expect(post.version == 1 && post.views == 0 && post.likes == 0 && post.comments.isEmpty && post.commentsCount == 0)
            #expect(post.publishedAt != nil)
            let keys = Set(answer.json.keys)
            #expect(keys == ["_id", "title", "content", "contentHtml", "excerpt", "slug", "status", "coverImage", "author", "views",
                             "likes", "comments", "commentsCount", "readTime", "createdAt", "updatedAt", "publishedAt", "version", "publishAt"])
            #expect((answer.json["createdAt"] as? String)?.range(of: #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$"#, options: .regularExpression) != nil)
            #expect((answer.json["author"] as? [String: Any])?["email"] == nil)
        }
    }

    @Test func createWithoutTokenIs401() async throws {
        try await withPostsService { api in
            let answer = try await api.request(.post, "/api/posts", json: #"{"title":"t","content":"c"}"#)
            #expect(answer.status == .unauthorized)
            #expect(answer.headers[.contentType] == "application/problem+json")
        }
    }

    @Test func invalidFieldsAnswer422WithErrorsAndCreateNothing() async throws {
        try await withPostsService { api in
            let ada = try await api.user()
            let cases = [
                (#"{"title":"   ","content":"c"}"#, "title"),
                // Drawn as nothing: zero-width space, byte-order mark, word joiner, Hangul filler.
                (#"{"title":"\u200B\uFEFF \u2060\u3164","content":"c"}"#, "title"),
                ("{\"title\":\"\(String(repeating: "x", count: 201))\",\"content\":\"c\"}", "title"),
                // One character of 40 KB: an "x" with 20,000 combining marks.
                ("{\"title\":\"x\(String(repeating: "\u{301}", count: 20_000))\",\"content\":\"c\"}", "title"),
                ("{\"title\":\"t\",\"content\":\"\(String(repeating: "x", count: 100_001))\"}", "content"),
                (#"{"title":"t","content":"c","coverImage":"javascript:alert(1)"}"#, "coverImage"),
                (#"{"title":"t","content":"c","coverImage":"/relative.png"}"#, "coverImage"),
                ("{\"title\":\"t\",\"content\":\"c\",\"coverImage\":\"https://x.test/\(String(repeating: "a", count: 2048))\"}", "coverImage"),
                // Markup and whitespace a page would take in as it is: RFC 3986 wants them percent-encoded.
                (#"{"title":"t","content":"c","coverImage":"https://img.test/x\n<script>"}"#, "coverImage"),
                (#"{"title":"t","content":"c","coverImage":"https://img.test/x\"onerror=\"alert(1)"}"#, "coverImage"),
                (#"{"title":"t","content":"c","coverImage":"https://img.test/a b.png"}"#, "coverImage"),
                (#"{"title":"t","content":"c","status":"archived"}"#, "status"),
                (#"{"content":"c"}"#, "title"),
                // A NUL, which PostgreSQL cannot store, is the field's error like any other.
                (#"{"title":"a\u0000b","content":"c"}"#, "title"),
                (#"{"title":"t","content":"c\u0000"}"#, "content"),
            ]
            for (body, field) in cases {
                let answer = try await api.request(.post, "/api/posts", as: ada, json: body)
                #expect(answer.status == .unprocessableContent, "\(field)")
                #expect(answer.problem?.errors?[field] != nil, "\(field)")
            }
            #expect(try await api.request(.post, "/api/posts", as: ada, json: "{not json").status == .badRequest)
            #expect(try await api.request(.post, "/api/posts", as: ada, json: #"{"title":"t"}"#, headers: [.contentType: "text/plain"]).status == .unsupportedMediaType)
            let title200 = String(repeating: "é", count: 200)
            #expect(try await api.create(title200, as: ada).title == title200)
            #expect(try await api.request(.get, "/api/posts").page().pagination.total == 1)
            // An edit is held to the same rules, and changes nothing.
            let post = try await api.create("Kept", coverImage: "https://img.test/caf%C3%A9.png", as: ada)
            let edit = try await api.request(.put, "/api/posts/\(post.id)", as: ada, json: #"{"coverImage":"https://img.test/x\"onerror=\"alert(1)"}"#)
            #expect(edit.status == .unprocessableContent && edit.problem?.errors?["coverImage"] != nil)
            #expect(try await api.request(.get, "/api/posts/\(post.id)").post().coverImage == "https://img.test/caf%C3%A9.png")
        }
    }

    @Test func unknownIdsAnswer404() async throws {
        try await withPostsService { api in
            let ada = try await api.user()
            for id in ["nope", "507f1f77bcf86cd799439011", UUID().uuidString, "%27%3B%20DROP%20TABLE%20posts"] {
                #expect(try await api.request(.get, "/api/posts/\(id)").status == .notFound)
                #expect(try await api.request(.put, "/api/posts/\(id)", as: ada, json: #"{"title":"x"}"#).status == .notFound)
                #expect(try await api.request(.delete, "/api/posts/\(id)", as: ada).status == .notFound)
                #expect(try await api.request(.post, "/api/posts/\(id)/like", as: ada).status == .notFound)
            }
            let answer = try await api.request(.get, "/api/posts/slug/nothing-here")
            #expect(answer.status == .notFound)
            #expect(answer.problem?.code == "not_found")
        }
    }

    @Test func getByIdAndSlugAnswerThePostWithETag() async throws {
        try await withPostsService { api in
            let ada = try await api.user()
            let post = try await api.create("Hello World", as: ada)
            let byId = try await api.request(.get, "/api/posts/\(post.id)")
            #expect(byId.status == .ok)
            #expect(try byId.post().id == post.id)
            #expect(byId.headers[.eTag] == "\"1\"")
            let bySlug = try await api.request(.get, "/api/posts/slug/hello-world")
            #expect(try bySlug.post().id == post.id)
        }
    }

    @Test func editChangesFieldsVersionAndSlugAndOldSlugStillResolves() async throws {
        try await withPostsService { api in
            let ada = try await api.user()
            let post = try await api.create("First title", content: "one", coverImage: "https://img.test/a.png", as: ada)
            let answer = try await api.request(.put, "/api/posts/\(post.id)", as: ada, json: #"{"title":"Second title","coverImage":null}"#)
            #expect(answer.status == .ok)
            let edited = try answer.post()
            #expect(edited.title == "Second title" && edited.content == "one" && edited.coverImage == nil)
            #expect(edited.slug == "second-title")
            #expect(edited.version == 2)
            #expect(answer.headers[.eTag] == "\"2\"")
            #expect(try await api.request(.get, "/api/posts/slug/first-title").post().id == post.id)
            #expect(try await api.request(.get, "/api/posts/slug/second-title").post().id == post.id)
            // A new post with the old title does not take the old slug.
            #expect(try await api.create("First title", as: ada).slug == "first-title-2")
            // Nothing changed: no new version.
            let same = try await api.request(.put, "/api/posts/\(post.id)", as: ada, json: #"{"title":"Second title"}"#)
            #expect(try same.post().version == 2)
            #expect(try await api.request(.put, "/api/posts/\(post.id)", as: ada, json: #"{"status":"draft"}"#).post().version == 3)
        }
    }

    @Test func editingOrDeletingAnotherUsersPostIs403() async throws {
        try await withPostsService { api in
            let ada = try await api.user()
            let bob = try await api.user("Bob")
            let post = try await api.create(as: ada)
            #expect(try await api.request(.put, "/api/posts/\(post.id)", as: bob, json: #"{"title":"Mine"}"#).status == .forbidden)
            #expect(try await api.request(.delete, "/api/posts/\(post.id)", as: bob).status == .forbidden)
            #expect(try await api.request(.put, "/api/posts/\(post.id)", json: #"{"title":"Mine"}"#).status == .unauthorized)
            #expect(try await api.request(.get, "/api/posts/\(post.id)").post().title == "A post")
        }
    }

    @Test func deleteAnswersMessageAcceptsEmptyJSONBodyAndRemovesThePost() async throws {
        try await withPostsService { api in
            let ada = try await api.user()
            let post = try await api.create(as: ada)
            let answer = try await api.request(.delete, "/api/posts/\(post.id)", as: ada, headers: [.contentType: "application/json"])
            #expect(answer.status == .ok)
            #expect(answer.json["message"] as? String == "Post deleted")
            #expect(try await api.request(.get, "/api/posts/\(post.id)").status == .notFound)
            #expect(try await api.request(.get, "/api/posts/slug/\(post.slug)").status == .notFound)
            #expect(try await api.request(.delete, "/api/posts/\(post.id)", as: ada).status == .notFound)
        }
    }

    @Test func staleIfMatchAnswers412WithTheCurrentPost() async throws {
        try await withPostsService { api in
            let ada = try await api.user()
            let post = try await api.create(as: ada)
            #expect(try await api.request(.put, "/api/posts/\(post.id)", as: ada, json: #"{"content":"v2"}"#, headers: [.ifMatch: "\"1\""]).status == .ok)
            let stale = try await api.request(.put, "/api/posts/\(post.id)", as: ada, json: #"{"content":"v3"}"#, headers: [.ifMatch: "\"1\""])
            #expect(stale.status == .preconditionFailed)
            #expect(try stale.post().content == "v2")
            #expect(try stale.post().version == 2)
            // Without If-Match the last write wins.
            #expect(try await api.request(.put, "/api/posts/\(post.id)", as: ada, json: #"{"content":"v3"}"#).post().version == 3)
            // A list matches when any of its tags is current (RFC 9110), and fails when none is.
            #expect(try await api.request(.put, "/api/posts/\(post.id)", as: ada, json: #"{"content":"v4"}"#, headers: [.ifMatch: #""9", "3""#]).status == .ok)
            #expect(try await api.request(.put, "/api/posts/\(post.id)", as: ada, json: #"{"content":"v5"}"#, headers: [.ifMatch: #""3", "9""#]).status == .preconditionFailed)
            #expect(try await api.request(.get, "/api/posts/\(post.id)").post().content == "v4")
        }
    }

    @Test func ifNoneMatchWithTheCurrentETagAnswers304() async throws {
        try await withPostsService { api in
            let ada = try await api.user()
            let post = try await api.create(as: ada)
            for path in ["/api/posts/\(post.id)", "/api/posts/slug/\(post.slug)"] {
                let answer = try await api.request(.get, path, headers: [.ifNoneMatch: "\"1\""])
                #expect(answer.status == .notModified, "\(path)")
                #expect(answer.body.isEmpty)
            }
            // Stored by no cache on its own: a like or a comment leaves the version, so a cache's
            // own revalidation would keep showing the counts it stored.
            #expect(try await api.request(.get, "/api/posts/\(post.id)").headers[.cacheControl] == "no-store")
            try await api.request(.put, "/api/posts/\(post.id)", as: ada, json: #"{"content":"new"}"#)
            #expect(try await api.request(.get, "/api/posts/\(post.id)", headers: [.ifNoneMatch: "\"1\""]).status == .ok)
            #expect(try await api.request(.get, "/api/posts/slug/\(post.slug)", headers: [.ifNoneMatch: "\"1\""]).status == .ok)
        }
    }

    @Test func idempotencyKeyReplaysTheFirstResultAndRefusesAnotherBody() async throws {
        try await withPostsService { api in
            let ada = try await api.user()
            let bob = try await api.user("Bob")
            let key: HTTPFields = [HTTPField.Name("Idempotency-Key")!: "offline-42"]
            let first = try await api.request(.post, "/api/posts", as: ada, json: #"{"title":"Once","content":"c"}"#, headers: key)
            let again = try await api.request(.post, "/api/posts", as: ada, json: #"{"title":"Once","content":"c"}"#, headers: key)
            #expect(first.status == .created && again.status == .created)
            #expect(try first.post().id == again.post().id)
            let other = try await api.request(.post, "/api/posts", as: ada, json: #"{"title":"Other","content":"c"}"#, headers: key)
            #expect(other.status == .unprocessableContent)
            // Keys are per user.
            let bobs = try await api.request(.post, "/api/posts", as: bob, json: #"{"title":"Once","content":"c"}"#, headers: key)
            #expect(try bobs.post().id != first.post().id)
            #expect(try await api.request(.get, "/api/posts").page().pagination.total == 2)
        }
    }

    /// The key is part of an index: one "character" of thousands of combining marks made it
    /// refuse the row, and the write answered 500.
    @Test func anIdempotencyKeyPastItsBytesAnswers400AndCreatesNothing() async throws {
        try await withPostsService { api in
            let ada = try await api.user()
            let marks = (0..<2_000).map { Character(UnicodeScalar(0x300 + $0 % 0x4F)!) }
            for key in ["k" + String(marks), String(repeating: "k", count: 256), ""] {
                let response = try await api.request(
                    .post, "/api/posts", as: ada, json: #"{"title":"Once","content":"c"}"#, headers: [HTTPField.Name("Idempotency-Key")!: key])
                #expect(response.status == .badRequest, "a key of \(key.utf8.count) bytes")
            }
            #expect(try await api.request(.get, "/api/posts").page().pagination.total == 0)
        }
    }

    @Test func concurrentRetriesWithOneIdempotencyKeyCreateOnePost() async throws {
        try await withPostsService { api in
            let ada = try await api.user()
            let ids = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<10 {
                    group.addTask {
                        try await api.request(.post, "/api/posts", as: ada, json: #"{"title":"Once","content":"c"}"#,
                                              headers: [HTTPField.Name("Idempotency-Key")!: "k"]).post().id
                    }
                }
                return try await group.reduce(into: Set<String>()) { $0.insert($1) }
            }
            #expect(ids.count == 1)
            #expect(try await api.request(.get, "/api/posts").page().pagination.total == 1)
        }
    }
}
