import Foundation
import PostlyModels
import PostsService
import Testing
import TestSupport

/// Slugs through the API: unique by the database under concurrency, never empty.
@Suite struct SlugRoutesTests {
    @Test func twentyConcurrentIdenticalTitlesGetTwentySlugs() async throws {
        try await withPostsService { api in
            let ada = try await api.user()
            let slugs = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<20 {
                    group.addTask { try await api.create("Same title", as: ada).slug }
                }
                return try await group.reduce(into: [String]()) { $0.append($1) }
            }
            #expect(Set(slugs).count == 20)
            #expect(Set(slugs) == Set(["same-title"] + (2...20).map { "same-title-\($0)" }))
        }
    }

    /// Suffixes come from the base's counter: one a title of its own took is passed over, and
    /// a post whose title comes back to the base keeps the slug of it that it has.
    @Test func suffixesSkipTakenSlugsAndAPostKeepsItsOwn() async throws {
        try await withPostsService { api in
            let ada = try await api.user()
            #expect(try await api.create("Test", as: ada).slug == "test")
            #expect(try await api.create("Test 3", as: ada).slug == "test-3")
            #expect(try await api.create("Test", as: ada).slug == "test-2")
            let fourth = try await api.create("Test", as: ada)
            #expect(fourth.slug == "test-4")
            func retitle(_ title: String) async throws -> String {
                try await api.request(.put, "/api/posts/\(fourth.id)", as: ada, json: PostsClient.json(["title": title])).post().slug
            }
            #expect(try await retitle("Other") == "other")
            #expect(try await retitle("Test!") == "test-4")
            #expect(try await api.create("Test", as: ada).slug == "test-5")
        }
    }

    /// A slug's post is read from memory (every read asked the database first), and a slug
    /// freed by its post's deletion and taken by another opens the other.
    @Test func aSlugIsReadFromMemoryUntilItsPostIsDeleted() async throws {
        try await withPostsService { api in
            let ada = try await api.user()
            let first = try await api.create("Kayak", as: ada)
            #expect(try await api.request(.get, "/api/posts/slug/kayak").post().id == first.id)
            // Its row taken away behind the service's back: the id kept in memory still serves.
            try await api.database.execute("DELETE FROM slugs WHERE slug = 'kayak'")
            #expect(try await api.request(.get, "/api/posts/slug/kayak").post().id == first.id)

            #expect(try await api.request(.delete, "/api/posts/\(first.id)", as: ada).status == .ok)
            #expect(try await api.request(.get, "/api/posts/slug/kayak").status == .notFound)
            let second = try await api.create("Kayak", as: ada)
            #expect(second.slug == "kayak")
            #expect(try await api.request(.get, "/api/posts/slug/kayak").post().id == second.id)
        }
    }

    /// A new title of the same slug keeps the post's address, and a title back at a base the
    /// post holds takes the base: the first slug of the base it held was taken, an older `-2`.
    @Test func aRetitleToTheSameSlugKeepsTheAddress() async throws {
        try await withPostsService { api in
            let ada = try await api.user()
            let first = try await api.create("Hello", as: ada)
            let post = try await api.create("Hello", as: ada)
            #expect(post.slug == "hello-2")
            #expect(try await api.request(.delete, "/api/posts/\(first.id)", as: ada).status == .ok)
            func retitle(_ title: String) async throws -> String {
                try await api.request(.put, "/api/posts/\(post.id)", as: ada, json: PostsClient.json(["title": title])).post().slug
            }
            #expect(try await retitle("Hello World") == "hello-world")
            #expect(try await retitle("Hello") == "hello")
            #expect(try await retitle("Hello!") == "hello")
            #expect(try await retitle("Hello World") == "hello-world")
            #expect(try await retitle("Hello") == "hello")
        }
    }

    /// A title that loses its trailing number takes the slug without it (it kept `wwdc-2026`,
    /// which looks like a suffixed `wwdc`); the old address still finds the post.
    @Test func droppingATrailingNumberFromTheTitleChangesTheSlug() async throws {
        try await withPostsService { api in
            let ada = try await api.user()
            let post = try await api.create("WWDC 2026", as: ada)
            #expect(post.slug == "wwdc-2026")
            let edited = try await api.request(.put, "/api/posts/\(post.id)", as: ada, json: PostsClient.json(["title": "WWDC"])).post()
            #expect(edited.slug == "wwdc")
            #expect(try await api.request(.get, "/api/posts/slug/wwdc-2026").post().id == post.id)
        }
    }

    @Test func titleWithoutUsableCharactersGetsASlugFromTheId() async throws {
        try await withPostsService { api in
            let ada = try await api.user()
            let post = try await api.create("🎉🎉🎉", as: ada)
            #expect(!post.slug.isEmpty)
            #expect(post.slug == post.id)
            #expect(try await api.request(.get, "/api/posts/slug/\(post.slug)").post().id == post.id)
        }
    }

    @Test func longTitleGivesASlugOfAtMost80Characters() async throws {
        try await withPostsService { api in
            let ada = try await api.user()
            let title = String(repeating: "Crème ", count: 33)  // 198 characters
            let post = try await api.create(title, as: ada)
            #expect(post.slug.count <= 80 && post.slug.hasPrefix("creme-creme"))
            let second = try await api.create(title, as: ada)
            #expect(second.slug.count <= 80 && second.slug.hasSuffix("-2"))
            // A 300-character title is refused (titles are 1...200), not truncated.
            let answer = try await api.request(.post, "/api/posts", as: ada, json: PostsClient.json(["title": String(repeating: "a", count: 300), "content": "c"]))
            #expect(answer.status == .unprocessableContent)
        }
    }
}
