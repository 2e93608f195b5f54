import Foundation
import HTTPTypes
import PostlyModels
@testable import PostsService
import Testing
import TestSupport

/// Reads answer from the cache of recently read posts; no change is hidden by it longer
/// than the contract allows.
@Suite struct PostCacheTests {
    @Test func thisInstancesChangesShowOnTheNextReadHoweverLongTheCacheKeepsPosts() async throws {
        try await withPostsService(cacheLifetime: .seconds(3600)) { api in
            let ada = try await api.user()
            let bob = try await api.user("Bob")
            let post = try await api.create("Before", as: ada)
            #expect(try await api.request(.get, "/api/posts/\(post.id)").post().title == "Before")
            #expect(try await api.request(.get, "/api/posts").page().posts.first?.title == "Before")

            try await api.request(.put, "/api/posts/\(post.id)", as: ada, json: #"{"title":"After"}"#)
            let edited = try await api.request(.get, "/api/posts/\(post.id)").post()
            #expect(edited.title == "After" && edited.version == 2)
            #expect(try await api.request(.get, "/api/posts").page().posts.first?.title == "After")

            try await api.request(.post, "/api/posts/\(post.id)/like", as: bob)
            #expect(try await api.request(.get, "/api/posts/\(post.id)").post().likes == 1)
            try await api.request(.delete, "/api/posts/\(post.id)/like", as: bob)
            #expect(try await api.request(.get, "/api/posts/\(post.id)").post().likes == 0)

            try await api.request(.delete, "/api/posts/\(post.id)", as: ada)
            #expect(try await api.request(.get, "/api/posts/\(post.id)").status == .notFound)
            #expect(try await api.request(.get, "/api/posts").page().posts.isEmpty)
        }
    }

    @Test func viewsStayExactWhileThePostIsCached() async throws {
        try await withPostsService(viewFlushInterval: .milliseconds(100), cacheLifetime: .seconds(3600)) { api in
            let ada = try await api.user()
            let post = try await api.create(as: ada)
            var shown: [Int] = []
            for round in 0..<3 {
                for _ in 0..<10 { shown.append(try await api.request(.get, "/api/posts/\(post.id)").post().views) }
                // Let the counter write them, then read again from a cache that held the post throughout.
                let written = try await eventually(within: .seconds(5)) {
                    try await api.database.query("SELECT views FROM posts WHERE id = \(post.id)")[0].decode("views", as: Int.self) == (round + 1) * 10
                }
                #expect(written)
            }
            // A read never shows more than the views so far (while a batch is being written it may
            // show fewer for a moment); once written, the cached post shows them all.
            #expect(zip(shown, 1...30).allSatisfy { $0 <= $1 }, "\(shown)")
            #expect(shown.first == 1)
            #expect(try await api.request(.get, "/api/posts/\(post.id)").post().views == 31)
        }
    }

    @Test func anotherInstancesChangeShowsWithinTheCacheLifetime() async throws {
        try await withPostsService(cacheLifetime: .milliseconds(500)) { api in
            let ada = try await api.user()
            let post = try await api.create("Mine", as: ada)
            #expect(try await api.request(.get, "/api/posts/\(post.id)").post().title == "Mine")
            // Another instance changes the post: this one hears of it only when its entry ages.
            try await api.database.execute("UPDATE posts SET title = 'Theirs', version = version + 1 WHERE id = \(post.id)")
            let started = ContinuousClock.now
            #expect(try await api.request(.get, "/api/posts/\(post.id)").post().title == "Mine", "answered from the cache")
            let shown = try await eventually(within: .seconds(2)) {
                try await api.request(.get, "/api/posts/\(post.id)").post().title == "Theirs"
            }
            #expect(shown)
            #expect(started.duration(to: .now) < .milliseconds(1500))
        }
    }
}

/// The cache's own rules, without a database.
@Suite struct PostCacheRulesTests {
    static func post(_ id: String, content: String = "words") -> Post {
        let now = Date()
        return Post(
            id: id, title: "T", content: content, contentHtml: "<p>\(content)</p>", excerpt: "", slug: id, status: .published,
            coverImage: nil, author: Author(userId: "u", name: "Ada"), views: 0, likes: 0, comments: [], commentsCount: 0,
            readTime: 1, createdAt: now, updatedAt: now, publishedAt: now, version: 1)
    }

    @Test func aReadThatBeganBeforeTheDropIsNotKept() {
        let cache = PostCache(lifetime: .seconds(60), capacityBytes: 1 << 20)
        let readAt = ContinuousClock.now
        cache.drop("a")
        cache.store(Self.post("a"), readAt: readAt)
        #expect(cache.post("a") == nil)
        cache.store(Self.post("a"), readAt: .now)
        #expect(cache.post("a") != nil)
    }

    @Test func droppingEveryPostAlsoRefusesOlderReads() {
        let cache = PostCache(lifetime: .seconds(60), capacityBytes: 1 << 20)
        cache.store(Self.post("a"), readAt: .now)
        let readAt = ContinuousClock.now
        cache.drop(PostCache.allPosts)
        cache.store(Self.post("b"), readAt: readAt)
        #expect(cache.post("a") == nil && cache.post("b") == nil)
    }

    @Test func itHoldsNoMoreThanItsBytes() {
        let capacity = 64 * 1024
        let cache = PostCache(lifetime: .seconds(60), capacityBytes: capacity)
        let content = String(repeating: "x", count: 1000)
        for index in 0..<200 { cache.store(Self.post("p\(index)", content: content), readAt: .now) }
        let held = (0..<200).filter { cache.post("p\($0)") != nil }.count
        #expect(held * PostCache.estimatedBytes(of: Self.post("p0", content: content)) <= capacity)
        #expect(held > 0)
        #expect(cache.post("p199") != nil, "the newest read is kept")
    }
}
