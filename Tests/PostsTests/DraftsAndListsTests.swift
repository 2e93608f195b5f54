import Foundation
import PostlyModels
import PostsService
import Testing
import TestSupport

/// Drafts belong to their author alone; lists paginate as the contract says.
@Suite struct DraftsAndListsTests {
    @Test func draftIsInvisibleToOtherUsersByIdAndSlug() async throws {
        try await withPostsService { api in
            let ada = try await api.user()
            let bob = try await api.user("Bob")
            let draft = try await api.create("Secret plans", status: .draft, as: ada)
            #expect(draft.publishedAt == nil)
            for uri in ["/api/posts/\(draft.id)", "/api/posts/slug/secret-plans"] {
                #expect(try await api.request(.get, uri).status == .notFound)
                #expect(try await api.request(.get, uri, as: bob).status == .notFound)
                #expect(try await api.request(.get, uri, as: ada).status == .ok)
            }
            #expect(try await api.request(.post, "/api/posts/\(draft.id)/like", as: bob).status == .notFound)
            #expect(try await api.request(.put, "/api/posts/\(draft.id)", as: bob, json: #"{"title":"x"}"#).status == .notFound)
            #expect(try await api.request(.get, "/api/posts").page().posts.isEmpty)
            #expect(try await api.request(.get, "/api/posts", as: bob).page().posts.isEmpty)
        }
    }

    /// The contract: lists carry each post's rendered body only when asked (`formats=html`);
    /// the key is absent, not null, otherwise. A single post always carries it.
    @Test func listsCarryContentHtmlOnlyWithFormatsHTML() async throws {
        try await withPostsService { api in
            let ada = try await api.user()
            let post = try await api.create("Rendered", content: "Some **bold** words.", as: ada)
            for uri in ["/api/posts", "/api/users/\(ada.id)/posts", "/api/users/me/posts"] {
                let plain = try await api.request(.get, uri, as: ada)
                let listed = try #require((plain.json["posts"] as? [[String: Any]])?.first)
                #expect(listed["contentHtml"] == nil, "\(uri)")
                #expect(listed["excerpt"] as? String == "Some bold words.", "\(uri)")
                let withHTML = try await api.request(.get, uri + "?formats=html", as: ada).page()
                #expect(withHTML.posts.first?.contentHtml == post.contentHtml, "\(uri)")
            }
            #expect(try await api.request(.get, "/api/posts/\(post.id)").post().contentHtml?.contains("<strong>bold</strong>") == true)
        }
    }

    @Test func draftListNeedsATokenAndShowsOnlyTheCallersDrafts() async throws {
        try await withPostsService { api in
            let ada = try await api.user()
            let bob = try await api.user("Bob")
            let adas = try await api.create("Ada's draft", status: .draft, as: ada)
            _ = try await api.create("Bob's draft", status: .draft, as: bob)
            _ = try await api.create("Published", as: ada)
            #expect(try await api.request(.get, "/api/posts?status=draft").status == .unauthorized)
            let page = try await api.request(.get, "/api/posts?status=draft", as: ada).page()
            #expect(page.posts.map(\.id) == [adas.id])
            #expect(try await api.request(.get, "/api/posts?status=other").status == .badRequest)
        }
    }

    @Test func usersRouteShowsDraftsOnlyToTheirAuthor() async throws {
        try await withPostsService { api in
            let ada = try await api.user()
            let bob = try await api.user("Bob")
            let draft = try await api.create("Draft", status: .draft, as: ada)
            let published = try await api.create("Published", as: ada)
            _ = try await api.create("Bob's", as: bob)
            #expect(try await api.request(.get, "/api/users/\(ada.id)/posts").page().posts.map(\.id) == [published.id])
            #expect(try await api.request(.get, "/api/users/\(ada.id)/posts?status=draft", as: bob).status == .forbidden)
            #expect(try await api.request(.get, "/api/users/\(ada.id)/posts?status=draft").status == .unauthorized)
            #expect(try await api.request(.get, "/api/users/\(ada.id)/posts?status=draft", as: ada).page().posts.map(\.id) == [draft.id])
            // `me` wins over an id, and shows any status, newest created first (a draft has no
            // publication to order by; ordered by it, every draft came first).
            let mine = try await api.request(.get, "/api/users/me/posts", as: ada).page()
            #expect(mine.posts.map(\.id) == [published.id, draft.id])
            #expect(try await api.request(.get, "/api/users/me/posts?status=draft", as: ada).page().posts.map(\.id) == [draft.id])
            #expect(try await api.request(.get, "/api/users/me/posts").status == .unauthorized)
        }
    }

    @Test func paginationTotalsFor0_1_10And11Posts() async throws {
        try await withPostsService { api in
            let ada = try await api.user()
            var created = 0
            for (count, pages) in [(0, 0), (1, 1), (10, 1), (11, 2)] {
                while created < count {
                    _ = try await api.create("Post \(created)", as: ada)
                    created += 1
                }
                let page = try await api.request(.get, "/api/posts?page=1&limit=10").page()
                #expect(page.pagination == Pagination(total: count, page: 1, limit: 10), "\(count)")
                #expect(page.pagination.totalPages == pages)
                #expect(page.posts.count == min(count, 10))
            }
            let second = try await api.request(.get, "/api/posts?page=2&limit=10").page()
            #expect(second.posts.count == 1 && second.pagination.total == 11)
            let beyond = try await api.request(.get, "/api/posts?page=5&limit=10").page()
            #expect(beyond.posts.isEmpty && beyond.pagination.total == 11)
            // Newest first.
            let first = try await api.request(.get, "/api/posts?limit=3").page()
            #expect(first.posts.map(\.title) == ["Post 10", "Post 9", "Post 8"])
        }
    }

    /// The feed and an author's list go by when a post was published, not when it was
    /// written: a draft published today comes before a post published yesterday.
    @Test func listsAreOrderedByPublicationThenCreation() async throws {
        try await withPostsService { api in
            let ada = try await api.user()
            let draft = try await api.create("Written first, published last", status: .draft, as: ada)
            api.clock.advance(by: 60)
            _ = try await api.create("Published in between", as: ada)
            api.clock.advance(by: 60)
            let published = try await api.request(.put, "/api/posts/\(draft.id)", as: ada, json: #"{"status":"published"}"#)
            #expect(published.status == .ok)
            let expected = ["Written first, published last", "Published in between"]
            #expect(try await api.request(.get, "/api/posts").page().posts.map(\.title) == expected)
            #expect(try await api.request(.get, "/api/users/\(ada.id)/posts").page().posts.map(\.title) == expected)
        }
    }

    @Test func outOfRangePageOrLimitIs400() async throws {
        try await withPostsService { api in
            for query in ["page=0", "page=-1", "page=x", "limit=0", "limit=101", "limit=ten"] {
                let feed = try await api.request(.get, "/api/posts?\(query)").status
                let users = try await api.request(.get, "/api/users/someone/posts?\(query)").status
                #expect(feed == .badRequest, "\(query)")
                #expect(users == .badRequest, "\(query)")
            }
        }
    }
}
