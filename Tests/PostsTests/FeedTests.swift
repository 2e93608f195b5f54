import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import HTTPTypes
import PostlyEvents
import PostlyModels
import PostlyService
@testable import PostsService
import Testing
import TestSupport

/// The RSS and Atom feeds: well-formed whatever the posts hold, the posts the API shows, and
/// validators that answer 304 until something the feed shows changed.
@Suite struct FeedTests {
    /// An XML document read into its elements: each with its path of names, attributes and text.
    struct Element {
        var path: [String]
        var attributes: [String: String]
        var text: String
        var children: [Element] = []

        func all(_ name: String) -> [Element] { children.filter { $0.path.last == name } }
        func first(_ name: String) -> Element? { children.first { $0.path.last == name } }
    }

    final class TreeBuilder: NSObject, XMLParserDelegate {
        var stack: [Element] = [Element(path: [], attributes: [:], text: "")]
        func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String]) {
            stack.append(Element(path: (stack.last?.path ?? []) + [qualifiedName ?? name], attributes: attributes, text: ""))
        }
        func parser(_ parser: XMLParser, foundCharacters string: String) { stack[stack.count - 1].text += string }
        func parser(_ parser: XMLParser, foundCDATA data: Data) { stack[stack.count - 1].text += String(decoding: data, as: UTF8.self) }
        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            let element = stack.removeLast()
            stack[stack.count - 1].children.append(element)
        }
    }

    /// The document's root element; fails the test when it is not well-formed XML.
    static func parse(_ body: Data) throws -> Element {
        let parser = XMLParser(data: body)
        let builder = TreeBuilder()
        parser.delegate = builder
        try #require(parser.parse(), "not well-formed: \(parser.parserError.map { "\($0)" } ?? "")")
        return try #require(builder.stack.first?.children.first)
    }

    static func get(_ api: PostsClient, _ uri: String, headers: HTTPFields = [:]) async throws -> Answer {
        try await api.request(.get, uri, headers: headers)
    }

    /// The feed's `Last-Modified`, once it is sent: a second or two after the last write.
    static func settledLastModified(_ api: PostsClient, _ uri: String) async throws -> String {
        var lastModified: String?
        _ = try await eventually(within: .seconds(5)) {
            lastModified = try await get(api, uri).headers[.lastModified]
            return lastModified != nil
        }
        return try #require(lastModified, "no Last-Modified for \(uri)")
    }

    @Test func bothFeedsShowTheTwentyLatestPublishedPostsAsTheAPIDoes() async throws {
        try await withPostsService { api in
            let ada = try await api.user("Ada Lovelace")
            for index in 1...22 { _ = try await api.create("Post \(index)", content: "Words of post **\(index)**.", as: ada) }
            _ = try await api.create("A draft", status: .draft, as: ada)
            _ = try await api.create("Later", status: .scheduled, publishAt: api.clock.now().addingTimeInterval(3600), as: ada)
            let listed = try await api.request(.get, "/api/posts?limit=20&formats=html").page().posts
            let site = PostsConfiguration(environment: [:]).feedSite

            let rss = try await Self.get(api, "/api/feeds/posts.rss?cachebuster=1")
            #expect(rss.status == .ok && rss.headers[.contentType] == "application/rss+xml; charset=utf-8")
            let channel = try #require(try Self.parse(rss.body).first("channel"))
            #expect(channel.first("title")?.text == "Postly" && channel.first("description")?.text.isEmpty == false)
            #expect(channel.first("atom:link")?.attributes["href"] == "http://127.0.0.1:8080/api/feeds/posts.rss")
            let items = channel.all("item")
            #expect(items.map { $0.first("title")?.text } == listed.map(\.title))
            #expect(items.map { $0.first("guid")?.text } == listed.map { "tag:127.0.0.1,2026-01-01:posts/\($0.id)" })
            #expect(items.allSatisfy { $0.first("guid")?.attributes["isPermaLink"] == "false" })
            #expect(items.map { $0.first("link")?.text } == listed.map { "http://127.0.0.1:8080/posts/\($0.slug)" })
            #expect(items.map { $0.first("dc:creator")?.text } == listed.map { _ in "Ada Lovelace" })
            #expect(items.map { $0.first("content:encoded")?.text } == listed.map(\.contentHtml))
            #expect(items.map { $0.first("pubDate")?.text } == listed.map { FeedRendering.rfc822($0.publishedAt!) })

            let atom = try await Self.get(api, "/api/feeds/posts.atom")
            #expect(atom.status == .ok && atom.headers[.contentType] == "application/atom+xml; charset=utf-8")
            let feed = try Self.parse(atom.body)
            #expect(feed.first("id")?.text == site.tag("posts") && feed.first("author")?.first("name")?.text == "Postly")
            let entries = feed.all("entry")
            #expect(entries.map { $0.first("id")?.text } == listed.map { site.tag("posts/\($0.id)") })
            #expect(entries.map { $0.first("title")?.text } == listed.map(\.title))
            #expect(entries.map { $0.first("content")?.text } == listed.map(\.contentHtml))
            #expect(entries.map { $0.first("published")?.text } == listed.map { Timestamp.format($0.publishedAt!) })
            #expect(entries.map { $0.first("author")?.first("name")?.text } == listed.map { _ in "Ada Lovelace" })
        }
    }

    /// An id that survives a new title: the entry keeps its id and takes the new link.
    @Test func anEntryKeepsItsIdWhenTheSlugChanges() async throws {
        try await withPostsService { api in
            let ada = try await api.user()
            let post = try await api.create("First title", as: ada)
            let before = try Self.parse(try await Self.get(api, "/api/feeds/posts.atom").body).all("entry")
            try await api.request(.put, "/api/posts/\(post.id)", as: ada, json: #"{"title":"Second title"}"#)
            let after = try Self.parse(try await Self.get(api, "/api/feeds/posts.atom").body).all("entry")
            #expect(before.first?.first("id")?.text == after.first?.first("id")?.text)
            #expect(after.first?.first("link")?.attributes["href"] == "http://127.0.0.1:8080/posts/second-title")
        }
    }

    @Test func hostileTitlesAndContentLeaveBothFeedsWellFormedAndScriptFree() async throws {
        try await withPostsService { api in
            let ada = try await api.user("Ada <b>&</b>\u{8}")
            let title = "A & B <c> ]]> \u{8} 🍮"
            _ = try await api.create(
                title, content: "<script>alert(1)</script>\n\nText ]]> and <iframe src=x></iframe> **bold** \u{1}\u{FFFE}",
                coverImage: "https://images.example.test/a.png?x=1&y='2'", as: ada)
            for uri in ["/api/feeds/posts.rss", "/api/feeds/posts.atom", "/api/users/\(ada.id)/feed.rss", "/api/users/\(ada.id)/feed.atom"] {
                let answer = try await Self.get(api, uri)
                #expect(answer.status == .ok, "\(uri)")
                let root = try Self.parse(answer.body)
                #expect(!answer.text.lowercased().contains("<script"), "\(uri)")
                let entry = try #require(root.first("channel")?.first("item") ?? root.first("entry"))
                #expect(entry.first("title")?.text == "A & B <c> ]]>  🍮", "\(uri)")
                let html = try #require(entry.first("content:encoded")?.text ?? entry.first("content")?.text)
                #expect(html.hasPrefix(#"<p><img src="https://images.example.test/a.png?x=1&amp;y='2'" alt=""/></p>"#), "\(uri)")
                #expect(html.contains("<strong>bold</strong>") && !html.lowercased().contains("<script") && !html.contains("<iframe"), "\(uri)")
            }
        }
    }

    @Test func validatorsAnswer304UntilWhatTheFeedShowsChanges() async throws {
        try await withPostsService(schedulerPoll: .milliseconds(20)) { api in
            let ada = try await api.user()
            let post = try await api.create("First", as: ada)
            let uri = "/api/feeds/posts.rss"
            let lastModified = try await Self.settledLastModified(api, uri)
            let first = try await Self.get(api, uri)
            let etag = try #require(first.headers[.eTag])
            #expect(first.headers[.lastModified] == lastModified)
            #expect(etag.range(of: #"^"[A-Za-z0-9_-]{16}"$"#, options: .regularExpression) != nil)
            #expect(first.headers[.cacheControl] == "public, max-age=300")
            #expect(HTTPDate.parse(lastModified) != nil)

            for headers: HTTPFields in [
                [.ifNoneMatch: etag], [.ifNoneMatch: "W/\(etag)"], [.ifNoneMatch: "\"other\", \(etag)"], [.ifNoneMatch: "*"],
                [.ifModifiedSince: lastModified], [.ifModifiedSince: HTTPDate.format(Date().addingTimeInterval(60))],
            ] {
                let answer = try await Self.get(api, uri, headers: headers)
                #expect(answer.status == .notModified && answer.body.isEmpty, "\(headers)")
                #expect(answer.headers[.eTag] == etag && answer.headers[.cacheControl] == "public, max-age=300", "\(headers)")
            }
            for headers: HTTPFields in [
                [.ifNoneMatch: "\"other\""], [.ifNoneMatch: "\"other\"", .ifModifiedSince: lastModified], [.ifModifiedSince: "yesterday"],
                [.ifModifiedSince: HTTPDate.format(Date(timeIntervalSince1970: 0))],
                // Its seconds once overflowed and stopped the service.
                [.ifModifiedSince: "Sun, 06 Nov 999999999999 08:49:37 GMT"],
            ] {
                #expect(try await Self.get(api, uri, headers: headers).status == .ok, "\(headers)")
            }

            func changes(_ change: () async throws -> Void) async throws -> Bool {
                let before = try await Self.get(api, uri).headers[.eTag]
                try await change()
                return try await Self.get(api, uri, headers: [.ifNoneMatch: before ?? ""]).status == .ok
            }
            #expect(try await changes { try await api.request(.put, "/api/posts/\(post.id)", as: ada, json: #"{"content":"New words."}"#) })
            #expect(try await changes { _ = try await api.create("Second", as: ada) })
            let scheduled = try await api.create("Later", status: .scheduled, publishAt: api.clock.now().addingTimeInterval(60), as: ada)
            #expect(!(try await Self.get(api, uri).text.contains("Later")))
            api.clock.advance(by: 61)
            #expect(try await eventually(within: .seconds(5)) { try await Self.get(api, uri).text.contains(scheduled.id) })
            // An author's new name comes from another instance's consumer here: its signal drops
            // the rendered feed.
            let before = try await Self.get(api, uri)
            let renamed = Event(
                producer: "auth", key: ada.id, sequence: 2, actorId: ada.id,
                data: .userUpdated(UserSnapshot(userId: ada.id, name: "Ada King", profilePicture: nil)))
            try await api.database.transaction { try await ProjectionHandler().apply(renamed, in: $0) }
            try await ReadModelSync.tellEveryInstance([.everything], from: "another instance", through: api.database)
            #expect(try await eventually(within: .seconds(15)) {
                try await Self.get(api, uri, headers: [.ifNoneMatch: before.headers[.eTag] ?? ""]).status == .ok
            })
            #expect(try await Self.get(api, uri).text.contains("<dc:creator>Ada King</dc:creator>"))
        }
    }

    /// An imported post keeps its old update time: the feed it joins is modified when it is
    /// imported (a reader that sent only If-Modified-Since got 304 and never saw it).
    @Test func anImportedPostModifiesTheFeedItJoins() async throws {
        try await withPostsService(importToken: ImportTesting.token) { api in
            _ = try await api.create("Written here", as: try await api.user())
            let before = try await Self.settledLastModified(api, "/api/feeds/posts.atom")
            let imported = ImportTesting.json(["posts": [ImportTests.post("65f1a2b3c4d5e6f708192a01")], "aliases": [] as [Any]])
            #expect(try await api.harness.importBatch("/internal/import/posts", json: imported).importOutcome().created == 1)
            let answer = try await Self.get(api, "/api/feeds/posts.atom", headers: [.ifModifiedSince: before])
            #expect(answer.status == .ok)
            #expect(answer.text.contains("65f1a2b3c4d5e6f708192a01"))
        }
    }

    /// A post taken out of a feed (deleted, or made a draft) modifies the feed it leaves, though
    /// the posts still shown are older: a reader sending only If-Modified-Since sees it gone.
    @Test func aPostThatLeavesAFeedModifiesIt() async throws {
        try await withPostsService { api in
            let ada = try await api.user()
            _ = try await api.create("Stays", as: ada)
            let deleted = try await api.create("Deleted", as: ada)
            let drafted = try await api.create("Drafted", as: ada)
            let feeds = ["/api/feeds/posts.atom", "/api/users/\(ada.id)/feed.rss"]
            var before: [String: String] = [:]
            for uri in feeds { before[uri] = try await Self.settledLastModified(api, uri) }
            #expect(try await api.request(.delete, "/api/posts/\(deleted.id)", as: ada).status == .ok)
            #expect(try await api.request(.put, "/api/posts/\(drafted.id)", as: ada, json: #"{"status":"draft"}"#).status == .ok)
            for uri in feeds {
                let answer = try await Self.get(api, uri, headers: [.ifModifiedSince: before[uri] ?? ""])
                #expect(answer.status == .ok, "\(uri)")
                #expect(answer.text.contains("Stays") && !answer.text.contains("Deleted") && !answer.text.contains("Drafted"), "\(uri)")
            }
        }
    }

    /// Feeds in memory are bounded by their bytes: an author's feed of long posts takes
    /// megabytes, and a thousand of them were kept.
    /// A write stamped before the feed was read but committed after it (a long transaction's)
    /// still reaches a reader that sends only If-Modified-Since: no `Last-Modified` is sent
    /// while such a write may come. It was, the late commit left it unmoved, and the reader
    /// got 304s and never saw the change.
    @Test func aWriteCommittedAfterTheFeedWasReadReachesAReaderOfItsDate() async throws {
        try await withPostsService { api in
            let ada = try await api.user()
            let post = try await api.create("Old title", as: ada)
            let uri = "/api/feeds/posts.atom"
            _ = try await Self.settledLastModified(api, uri)
            let lastModified = try await api.database.whileLocked(by: { try await $0.execute("SELECT 1") }) {
                // Committed while the long transaction runs, and stamped after its start.
                _ = try await api.create("Another", as: ada)
                return try await Self.get(api, uri).headers[.lastModified]
            } thenCommitting: { connection in
                try await connection.execute("UPDATE posts SET title = 'New title', updated_at = now() WHERE id = \(post.id)")
                try await ChangeLog.post(post.id, authorId: ada.id, status: .published, in: connection)
            }
            #expect(lastModified == nil)
            #expect(try await eventually(within: .seconds(5)) {
                let answer = try await Self.get(api, uri, headers: lastModified.map { [.ifModifiedSince: $0] } ?? [:])
                return answer.status == .ok && answer.text.contains("New title")
            })
            // Once every write stamped in its second has committed, it is sent again.
            _ = try await Self.settledLastModified(api, uri)
        }
    }

    /// A feed kept unsettled is rendered again after its life by one reader, while the others
    /// are served it: every reader at that moment rendered it.
    @Test func anUnsettledFeedIsRenderedAgainByOneReader() async throws {
        let cache = FeedCache()
        let key = FeedCache.Key(format: .rss, authorId: nil)
        let unsettled = RenderedFeed(format: .rss, body: Array("old".utf8), lastModified: Date(), isSettled: false)
        _ = try await cache.feed(key) { unsettled }
        try await Task.sleep(for: FeedCache.unsettledLife + .milliseconds(100))
        let renders = LoadCounter()
        let bodies = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<10 {
                group.addTask {
                    let feed = try await cache.feed(key) {
                        renders.add()
                        try await Task.sleep(for: .milliseconds(300))
                        return RenderedFeed(format: .rss, body: Array("new".utf8), lastModified: Date(), isSettled: true)
                    }
                    return String(decoding: feed.body, as: UTF8.self)
                }
            }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(renders.count == 1)
        // The renderer gets the new one; the others the old one, or the new one if late.
        #expect(bodies.contains("new") && bodies.contains("old") && bodies.allSatisfy { $0 == "new" || $0 == "old" })
        #expect(String(decoding: try await cache.feed(key) { unsettled }.body, as: UTF8.self) == "new")
    }

    @Test func theFeedCacheKeepsWithinItsBytes() async throws {
        do {
            let cache = FeedCache(capacityBytes: 1 << 20)
            let renders = Locked(0)
            func read(_ author: Int) async throws {
                _ = try await cache.feed(FeedCache.Key(format: .rss, authorId: "\(author)")) {
                    renders.withLock { $0 += 1 }
                    return RenderedFeed(format: .rss, body: Array(repeating: UInt8(ascii: "x"), count: 300_000), lastModified: Date(), isSettled: true)
                }
            }
            for author in 0..<5 { try await read(author) }
            try await read(4)
            #expect(renders.value == 5, "the latest is kept")
            try await read(0)
            #expect(renders.value == 6, "the oldest made room")
        }
    }

    @Test func authorFeedsAnswer404ForUnknownAuthorsAndAnEmptyFeedForAuthorsWithoutPosts() async throws {
        try await withPostsService { api in
            let ada = try await api.user("Ada Lovelace")
            _ = try await api.create("Draft", status: .draft, as: ada)
            for uri in ["/api/users/nobody/feed.rss", "/api/users/me/feed.atom"] {
                let answer = try await Self.get(api, uri)
                #expect(answer.status == .notFound && answer.problem?.detail == "Author not found", "\(uri)")
            }
            let atom = try await Self.get(api, "/api/users/\(ada.id)/feed.atom")
            #expect(atom.status == .ok)
            let feed = try Self.parse(atom.body)
            #expect(feed.all("entry").isEmpty && feed.first("author")?.first("name")?.text == "Ada Lovelace")
            #expect(feed.first("title")?.text == "Ada Lovelace on Postly")
            let rss = try await Self.get(api, "/api/users/\(ada.id)/feed.rss")
            #expect(try Self.parse(rss.body).first("channel")?.all("item").isEmpty == true)

            let head = try await api.request(.head, "/api/feeds/posts.rss")
            #expect(head.status == .ok && head.body.isEmpty && head.headers[.eTag] != nil, "\(head.status) \(head.headers) \(head.text.prefix(100))")
        }
    }

    @Test func feedsAnswer405WithAllowToAnyMethodButGetAndHead() async throws {
        try await withPostsService { api in
            let ada = try await api.user("Ada Lovelace")
            for (method, uri) in [(HTTPRequest.Method.post, "/api/feeds/posts.rss"), (.delete, "/api/feeds/posts.atom"), (.put, "/api/users/\(ada.id)/feed.rss")] {
                let answer = try await api.request(method, uri, as: ada, json: "{}")
                #expect(answer.status == .methodNotAllowed && answer.headers[.allow] == "GET, HEAD", "\(method) \(uri): \(answer.status) \(answer.headers)")
                #expect(answer.problem?.code == "method_not_allowed", "\(method) \(uri): \(answer.text.prefix(200))")
            }
        }
    }
}
