import Foundation
import HTTPTypes
import PostlyEvents
import PostlyModels
import PostlyPostgres
@testable import PostsService
import Synchronization
import Testing
import TestSupport

/// Reads answer from the read model in memory, which keeps a post until a change drops it:
/// no change is hidden by it longer than the contract allows, here or in another instance.
@Suite struct ReadModelTests {
    /// A change reads back from its line whatever its ids hold: a post id with a space (an
    /// import kept the earlier deployment's) was read as no change, and stayed cached as it was.
    @Test func aChangeReadsBackFromItsLine() {
        let changes: [PostChange] = [
            .post(id: "legacy 42"), .counts(id: "legacy 42"), .lists(authorId: "an author", status: .draft), .views(id: "legacy 42", total: 7), .everything,
        ]
        #expect(changes.map { PostChange(line: Substring($0.line)) } == changes)
    }

    @Test func thisInstancesChangesShowOnTheNextRead() async throws {
        try await withPostsService { api in
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

            try await api.request(.put, "/api/posts/\(post.id)", as: ada, json: #"{"status":"draft"}"#)
            #expect(try await api.request(.get, "/api/posts").page().pagination.total == 0)
            #expect(try await api.request(.get, "/api/posts?status=draft", as: ada).page().posts.map(\.id) == [post.id])

            try await api.request(.delete, "/api/posts/\(post.id)", as: ada)
            #expect(try await api.request(.get, "/api/posts/\(post.id)").status == .notFound)
            #expect(try await api.request(.get, "/api/users/me/posts", as: ada).page().pagination.total == 0)
        }
    }

    @Test func viewsStayExactWhileThePostIsCached() async throws {
        try await withPostsService(viewFlushInterval: .milliseconds(100)) { api in
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

    /// What one instance writes shows in the other's read model within the contract's second.
    @Test func anotherInstancesChangesShowWithinASecond() async throws {
        try await withTwoInstances { one, two in
            let feed = PostFilter(status: .published, authorId: nil)
            try await withRunning([one.sync, two.sync]) {
                let post = try await one.publish("Mine")
                // Both read models hold the post and the feed's page from now on.
                #expect(try await two.repository.post(id: post.id, viewer: nil).title == "Mine")
                #expect(try await two.repository.list(feed, page: PageRequest()).pagination.total == 1)
                try await Task.sleep(for: .milliseconds(300))

                func shows(_ condition: @escaping @Sendable () async throws -> Bool) async throws {
                    let started = ContinuousClock.now
                    #expect(try await eventually(within: .seconds(3), condition))
                    #expect(started.duration(to: .now) < .seconds(1))
                }
                _ = try await one.writes.write {
                    try await one.repository.update(id: post.id, PostChanges(title: "Edited"), by: Self.ada, ifMatch: nil, in: $0)
                }
                try await shows { try await two.repository.post(id: post.id, viewer: nil).title == "Edited" }

                try await one.writes.write { try await one.repository.setLiked(true, id: post.id, by: Caller(userId: "bob", name: "Bob"), in: $0) }
                try await shows { try await two.repository.post(id: post.id, viewer: nil).likes == 1 }

                // A comment applied by the instance whose consumer got the event.
                try await one.database.transaction { connection in
                    try await ProjectionHandler().apply(try Self.comment(on: post.id), in: connection)
                }
                try await shows { try await two.repository.post(id: post.id, viewer: nil).commentsCount == 1 }

                // Views written by one instance's counter are merged into the other's cached post.
                try await one.repository.addViews([post.id: 5])
                try await shows { try await two.repository.post(id: post.id, viewer: nil).views == 5 }

                _ = try await one.publish("Second")
                try await shows { try await two.repository.list(feed, page: PageRequest()).pagination.total == 2 }

                try await one.writes.write { try await one.repository.delete(id: post.id, by: Self.ada, in: $0) }
                try await shows {
                    let gone = (try? await two.repository.post(id: post.id, viewer: nil)) == nil
                    let listed = try await two.repository.list(feed, page: PageRequest()).posts.map(\.title)
                    return gone && listed == ["Second"]
                }
            }
        }
    }

    /// A rendered feed is part of the read model: another instance's post shows in it within
    /// the contract's second (it was kept for 10 s).
    @Test func aFeedShowsAnotherInstancesPostWithinASecond() async throws {
        try await withTwoInstances { one, two in
            try await withRunning([one.sync, two.sync]) {
                _ = try await one.publish("First")
                @Sendable func titles() async throws -> String {
                    let feed = try await two.model.feeds.feed(FeedCache.Key(format: .rss, authorId: nil)) {
                        let content = try await two.repository.feed(authorId: nil, epoch: .distantPast)
                        return RenderedFeed(format: .rss, body: Array(content.posts.map(\.title).joined(separator: ",").utf8), lastModified: content.lastModified, isSettled: content.isSettled)
                    }
                    return String(decoding: feed.body, as: UTF8.self)
                }
                #expect(try await titles() == "First")
                try await Task.sleep(for: .milliseconds(300))
                _ = try await one.publish("Second")
                let started = ContinuousClock.now
                #expect(try await eventually(within: .seconds(5)) { try await titles().hasPrefix("Second") })
                #expect(started.duration(to: .now) < .seconds(1))
            }
        }
    }

    /// A page kept from before a post became a draft, read while the post itself was dropped
    /// (a like) and before the change arrived: the list does not show the draft.
    @Test func aPageKeptFromBeforeAPostBecameADraftDoesNotShowIt() async throws {
        try await withTwoInstances { one, two in
            let feed = PostFilter(status: .published, authorId: nil)
            let post = try await one.publish("Public")
            #expect(try await two.repository.list(feed, page: PageRequest()).posts.map(\.id) == [post.id])
            // No sync runs: instance two hears of nothing but what it is told here.
            _ = try await one.writes.write {
                try await one.repository.update(id: post.id, PostChanges(content: "Secret.", status: .draft), by: Self.ada, ifMatch: nil, in: $0)
            }
            two.model.apply(.post(id: post.id))
            #expect(try await two.repository.list(feed, page: PageRequest()).posts.isEmpty)
        }
    }

    /// An instance killed between a commit and its notification never sends it: the other
    /// instances learn of the change from the change log (a post unpublished there was served
    /// as published here, in its page too, until it changed again).
    @Test func aChangeWhoseNotificationWasNeverSentShowsFromTheChangeLog() async throws {
        try await withTwoInstances { one, two in
            try await withRunning([two.sync, two.watch]) {
                try await Task.sleep(for: .milliseconds(500))
                let post = try await one.publish("Before")
                let feed = PostFilter(status: .published, authorId: nil)
                #expect(try await two.repository.post(id: post.id, viewer: nil).title == "Before")
                #expect(try await two.repository.list(feed, page: PageRequest()).posts.map(\.id) == [post.id])
                // Instance one's change, its notification never sent (its sync is not running).
                _ = try await one.writes.write {
                    try await one.repository.update(id: post.id, PostChanges(title: "After", status: .draft), by: Self.ada, ifMatch: nil, in: $0)
                }
                // Within about a second, but the log's frontier waits for every older transaction
                // of the cluster, other tests' included. The page and the post are dropped one
                // after the other (a read may come between): both are waited for.
                let hidden = try await eventually(within: .seconds(15)) {
                    let listed = try await two.repository.list(feed, page: PageRequest()).posts
                    let shown = try await two.repository.post(id: post.id, viewer: Self.ada.userId)
                    return listed.isEmpty && shown.title == "After"
                }
                #expect(hidden)
            }
        }
    }

    /// A like or a comment drops its post, not the rendered feeds, which show neither: every like
    /// dropped every feed, and the readers after it rendered the feeds again.
    @Test func aLikeOrACommentKeepsTheRenderedFeeds() async throws {
        try await withTwoInstances { one, _ in
            let post = try await one.publish("Kayak")
            _ = try await one.repository.post(id: post.id, viewer: nil)
            let key = FeedCache.Key(format: .rss, authorId: nil)
            let feed = RenderedFeed(format: .rss, body: Array("<rss/>".utf8), lastModified: Date(), isSettled: true)
            _ = try await one.model.feeds.feed(key) { feed }
            func rendersAgain() async throws -> Bool {
                var rendered = false
                _ = try await one.model.feeds.feed(key) {
                    rendered = true
                    return feed
                }
                return rendered
            }

            try await one.writes.write { try await one.repository.setLiked(true, id: post.id, by: Caller(userId: "bob", name: "Bob"), in: $0) }
            try await one.database.transaction { connection in
                try await ProjectionHandler().apply(try Self.comment(on: post.id), in: connection)
            }
            #expect(try await !rendersAgain())
            let counted = try await one.repository.post(id: post.id, viewer: nil)
            #expect(counted.likes == 1 && counted.commentsCount == 1)

            _ = try await one.writes.write {
                try await one.repository.update(id: post.id, PostChanges(title: "Canoe"), by: Self.ada, ifMatch: nil, in: $0)
            }
            #expect(try await rendersAgain())
        }
    }

    /// A feed is read with its `Last-Modified` from one snapshot: read from an instance's model
    /// that had not heard of another's unpublish yet, it listed the post under a date that
    /// counted the unpublish, and a reader sending only If-Modified-Since kept the post.
    @Test func aFeedShowsWhatItsLastModifiedCounts() async throws {
        try await withTwoInstances { one, two in
            try await withRunning([two.sync]) {
                try await Task.sleep(for: .milliseconds(500))
                let post = try await one.publish("Before")
                let (published, feedPage) = (PostFilter(status: .published, authorId: nil), PageRequest(page: 1, limit: FeedContent.size))
                #expect(try await two.repository.list(published, page: feedPage).posts.map(\.id) == [post.id])
                // Instance one's change, not heard of by two yet (one's sync is not running).
                _ = try await one.writes.write {
                    try await one.repository.update(id: post.id, PostChanges(status: .draft), by: Self.ada, ifMatch: nil, in: $0)
                }
                #expect(try await two.repository.list(published, page: feedPage).posts.map(\.id) == [post.id])
                let feed = try await two.repository.feed(authorId: nil, epoch: .distantPast)
                #expect(feed.posts.isEmpty)
                #expect(feed.lastModified > post.updatedAt)
            }
        }
    }

    /// An author's feed shows their name, posts or none: a rename moves its `Last-Modified`.
    @Test func anAuthorsFeedWithoutPostsChangesWithTheirName() async throws {
        try await withTwoInstances { one, _ in
            try await one.database.execute("INSERT INTO users (user_id, name) VALUES ('ada', 'Ada')")
            let before = try await one.repository.feed(authorId: "ada", epoch: .distantPast)
            #expect(before.posts.isEmpty && before.author?.name == "Ada")
            try await one.database.transaction { connection in
                try await connection.execute("UPDATE users SET name = 'Ada King' WHERE user_id = 'ada'")
                try await ChangeLog.author("ada", in: connection)
            }
            let after = try await one.repository.feed(authorId: "ada", epoch: .distantPast)
            #expect(after.author?.name == "Ada King" && after.lastModified > before.lastModified)
        }
    }

    /// What the change log does not hold (here a title written around it, as likes are): the
    /// next instance to start tells the others to drop everything, in case it replaces one
    /// killed between a commit and its notification.
    @Test func anInstanceStartingTellsTheOthersToDropEverything() async throws {
        try await withTwoInstances { one, two in
            try await withRunning([two.sync, two.watch]) {
                // Listening has started (which drops everything once).
                try await Task.sleep(for: .milliseconds(500))
                let post = try await one.publish("Before")
                try await two.waitUntilWatched(post.id)
                #expect(try await two.repository.post(id: post.id, viewer: nil).title == "Before")
                try await one.database.execute("UPDATE posts SET title = 'After' WHERE id = \(post.id)")
                try await Task.sleep(for: ChangeWatch.pollInterval * 2)
                #expect(try await two.repository.post(id: post.id, viewer: nil).title == "Before")
                let replacement = Instance(database: one.database)
                try await withRunning([replacement.sync]) {
                    let dropped = try await eventually(within: .seconds(3)) { try await two.repository.post(id: post.id, viewer: nil).title == "After" }
                    #expect(dropped)
                }
            }
        }
    }

    /// A sign-up drops the posts its user wrote (none, mostly), not every instance's whole
    /// read model.
    @Test func aSignUpDropsOnlyWhatItsUserWrote() async throws {
        try await TestDatabase.with { database in
            try await schema.apply(to: database)
            let one = Instance(database: database)
            let post = try await one.publish("Mine")
            _ = try await one.repository.post(id: post.id, viewer: nil)
            func register(_ userId: String) async throws {
                let event = Event(
                    producer: "auth", key: userId, sequence: 1, actorId: userId,
                    data: .userRegistered(UserSnapshot(userId: userId, name: "Name of \(userId)", profilePicture: "https://pictures.example/\(userId)")))
                try await database.transaction { try await ProjectionHandler().apply(event, in: $0) }
            }
            try await register("carol")
            #expect(one.model.posts.usage.entries == 1)
            try await register("ada")
            #expect(one.model.posts.usage.entries == 0)
            #expect(try await one.repository.post(id: post.id, viewer: nil).author.profilePicture == "https://pictures.example/ada")
        }
    }

    /// A page's cost counts the author's id it holds: ids of 8 KiB asked for by anyone made
    /// empty pages costed at 64 bytes each, half a gigabyte within a budget of two megabytes.
    @Test func pagesOfLongAuthorIdsStayWithinTheBudget() async throws {
        try await TestDatabase.with { database in
            let model = ReadModel(database: database, capacityBytes: 1 << 20)
            for index in 0..<500 {
                let key = ReadModel.PageKey(filter: PostFilter(status: .published, authorId: "\(index)" + String(repeating: "x", count: 8_192)), page: PageRequest())
                _ = try await model.pages.values([key]) { _ in [key: ReadModel.PageIDs(ids: [], total: 0)] }
            }
            #expect(model.pages.usage.entries * 2 * 8_192 <= 1 << 20, "\(model.pages.usage)")
        }
    }

    /// Two instances of the service on one database, each with its own pool, read model and
    /// sync, as two processes have them (commit signals are per `Database`).
    func withTwoInstances(_ body: (Instance, Instance) async throws -> Void) async throws {
        try await TestDatabase.with { database in
            try await schema.apply(to: database)
            let other = Database(configuration: database.configuration, logger: testLogger)
            do {
                try await body(Instance(database: database), Instance(database: other))
            } catch {
                await other.close()
                throw error
            }
            await other.close()
        }
    }

    static let ada = Caller(userId: "ada", name: "Ada")

    struct Instance {
        let database: Database
        let model: ReadModel
        let repository: PostgresPostRepository
        let writes: WriteUnit
        let sync: ReadModelSync
        let watch: ChangeWatch

        init(database: Database) {
            self.database = database
            model = ReadModel(database: database, capacityBytes: 1 << 20)
            repository = PostgresPostRepository(database: database, model: model)
            writes = WriteUnit(database: database, producer: "posts", logger: testLogger)
            sync = ReadModelSync(database: database, model: model, logger: testLogger)
            watch = ChangeWatch(feed: ChangeFeed(database: database, logger: testLogger), model: model, logger: testLogger)
        }

        /// Waits until the watch has looked past the post's last change in the log, which it
        /// may read only once every older transaction of the cluster has ended (other tests').
        func waitUntilWatched(_ postId: String) async throws {
            let row = try await database.query("SELECT txid::text AS txid, seq FROM changes WHERE kind = 'post' AND id = \(postId)")[0]
            let change = ChangeCursor(epoch: "", txid: UInt64(try row.decode("txid", as: String.self)) ?? 0, seq: try row.decode("seq"))
            let readable = try await eventually(within: .seconds(15)) { try await !watch.feed.now().precedes(change) }
            guard readable else { throw UnexpectedEvent() }
            try await Task.sleep(for: ChangeWatch.pollInterval * 2)
        }

        /// A published post by Ada, written as a request writes it.
        func publish(_ title: String) async throws -> Post {
            try await writes.write {
                try await repository.create(NewPost(title: title, content: "Words.", status: .published, coverImage: nil), by: ReadModelTests.ada, in: $0)
            }
        }
    }

    static func comment(on postId: String) throws -> Event {
        var event = try EventFixtures.event(.commentCreated)
        guard case .commentCreated(var snapshot) = event.data else { throw UnexpectedEvent() }
        snapshot.comment.postId = postId
        event.data = .commentCreated(snapshot)
        return event
    }

    struct UnexpectedEvent: Error {}
}

/// Counts loads from closures that run concurrently.
final class LoadCounter: Sendable {
    private let value = Atomic(0)
    func add() { value.add(1, ordering: .relaxed) }
    var count: Int { value.load(ordering: .relaxed) }
}

/// A cached post's estimate counts every string it holds: its text alone left a post of a
/// 2 KB cover URL, a long excerpt and a one-word body at a fifth of what it holds.
@Test func aPostsEstimateCountsEveryStringItHolds() {
    let picture = "https://example.com/" + String(repeating: "p", count: 2_000)
    let author = Author(userId: String(repeating: "a", count: 200), name: String(repeating: "n", count: 300), profilePicture: picture)
    let comments = (0..<3).map { Comment(id: "c\($0)", postId: "p1", content: "Hi", author: author, createdAt: Date()) }
    let post = Post(
        id: "p1", title: "T", content: "W", contentHtml: "<p>W</p>", excerpt: String(repeating: "e", count: 800), slug: String(repeating: "s", count: 400),
        status: .published, coverImage: "https://example.com/" + String(repeating: "c", count: 2_000), author: author, views: 0, likes: 0,
        comments: comments, commentsCount: 3, readTime: 1, createdAt: Date(), updatedAt: Date(), publishedAt: Date(), version: 1)
    let strings = [post.id, post.title, post.content, post.contentHtml!, post.excerpt, post.slug, post.coverImage!]
        + [author.userId, author.name, picture] + comments.flatMap { [$0.id, $0.postId, $0.content, author.userId, author.name, picture] }
    #expect(ReadModel.estimatedBytes(of: post) >= strings.reduce(0) { $0 + $1.utf8.count })
}

/// The read cache's own rules, without a database.
@Suite struct ReadCacheRulesTests {
    static func cache(capacity: Int = 1 << 20) -> ReadCache<String, String> {
        ReadCache(capacityBytes: capacity, cost: { $1.utf8.count }, tags: { [$0] })
    }

    @Test func aLoadThatBeganBeforeADropAnswersButIsNotKept() async throws {
        let cache = Self.cache()
        let loads = LoadCounter()
        let value = try await cache.values(["a"]) { keys in
            loads.add()
            cache.drop(tags: ["a"])  // a change commits while the read runs
            return ["a": "old"]
        }
        #expect(value["a"] == "old")
        #expect(try await cache.values(["a"]) { _ in loads.add(); return ["a": "new"] }["a"] == "new")
        #expect(try await cache.values(["a"]) { _ in loads.add(); return ["a": "newer"] }["a"] == "new")
        #expect(loads.count == 2)
    }

    /// A view flush's totals arrive as an update: a load of the post running then may have
    /// read the total before them, and was kept (its views went back until the next flush).
    @Test func aLoadRunningWhenItsKeyIsUpdatedAnswersButIsNotKept() async throws {
        let cache = Self.cache()
        let value = try await cache.values(["a"]) { _ in
            cache.update("a") { $0 = "updated" }  // no entry yet: only the running load knows
            return ["a": "old"]
        }
        #expect(value["a"] == "old")
        #expect(try await cache.values(["a"]) { _ in ["a": "new"] }["a"] == "new")
        cache.update("a") { $0 = "updated" }
        #expect(try await cache.values(["a"]) { _ in ["a": "loaded again"] }["a"] == "updated")
    }

    @Test func droppingEverythingAlsoRefusesLoadsRunning() async throws {
        let cache = Self.cache()
        _ = try await cache.values(["a"]) { _ in ["a": "kept"] }
        _ = try await cache.values(["b"]) { _ in
            cache.dropAll()
            return ["b": "old"]
        }
        #expect(cache.usage.entries == 0)
    }

    @Test func concurrentMissesOfOneKeyWaitForOneLoad() async throws {
        let cache = Self.cache()
        let loads = LoadCounter()
        let (started, startedContinuation) = AsyncStream.makeStream(of: Void.self)
        let (release, releaseContinuation) = AsyncStream.makeStream(of: Void.self)
        try await withThrowingTaskGroup(of: String?.self) { group in
            group.addTask {
                try await cache.values(["a"]) { _ in
                    loads.add()
                    startedContinuation.yield()
                    for await _ in release { break }
                    return ["a": "value"]
                }["a"]
            }
            for await _ in started { break }
            for _ in 0..<20 { group.addTask { try await cache.values(["a", "b"]) { _ in loads.add(); return ["b": "other"] }["a"] } }
            // Let the twenty reach the cache (they wait for the first load, or load only "b").
            try await Task.sleep(for: .milliseconds(200))
            releaseContinuation.yield()
            for try await value in group { #expect(value == "value") }
        }
        // One load of "a"; "b" once by the first of the twenty and then from memory (or a few
        // times if they raced before the first stored it).
        #expect(loads.count >= 2)
        #expect(try await cache.values(["a"]) { _ in ["a": "again"] }["a"] == "value")
    }

    @Test func theLeastRecentlyUsedGoFirstAndTheBytesStayBounded() async throws {
        let capacity = 10_000
        let cache = Self.cache(capacity: capacity)
        let text = String(repeating: "x", count: 1000)
        _ = try await cache.values(["keep"]) { _ in ["keep": text] }
        for index in 0..<50 {
            _ = try await cache.values(["p\(index)"]) { _ in ["p\(index)": text] }
            // Read "keep" every time: it stays the most recently used.
            _ = try await cache.values(["keep"]) { _ in Issue.record("keep was evicted"); return ["keep": text] }
        }
        #expect(cache.usage.bytes <= capacity)
        #expect(cache.usage.entries >= 5)
    }
}

/// The lists' totals are kept by the writes: each equals the count of its posts through
/// creates, publishing, unpublishing and deletes.
@Suite struct PostTotalsTests {
    @Test func everyListsTotalFollowsTheWrites() async throws {
        try await TestDatabase.with { database in
            try await schema.apply(to: database)
            let repository = PostgresPostRepository(database: database)
            let writes = WriteUnit(database: database, producer: "posts", logger: testLogger)
            let ada = Caller(userId: "ada", name: "Ada")
            let bob = Caller(userId: "bob", name: "Bob")
            func create(_ status: PostStatus, by caller: Caller) async throws -> Post {
                try await writes.write {
                    try await repository.create(NewPost(title: "T", content: "W.", status: status, coverImage: nil), by: caller, in: $0)
                }
            }
            func expectTotalsAreCounts() async throws {
                for filter in [
                    PostFilter(status: .published, authorId: nil), PostFilter(status: .draft, authorId: nil),
                    PostFilter(status: nil, authorId: "ada"), PostFilter(status: .published, authorId: "ada"),
                    PostFilter(status: .draft, authorId: "ada"), PostFilter(status: .draft, authorId: "bob"),
                ] {
                    let page = try await repository.list(filter, page: PageRequest(page: 1, limit: 100))
                    let counted = try await database.query(
                        """
                        SELECT count(*)::bigint AS n FROM posts
                        WHERE status = COALESCE(\(filter.status?.rawValue), status) AND author_id = COALESCE(\(filter.authorId), author_id)
                        """)[0].decode("n", as: Int.self)
                    #expect(page.pagination.total == counted && page.posts.count == counted, "\(filter)")
                }
            }
            let first = try await create(.published, by: ada)
            let draft = try await create(.draft, by: ada)
            _ = try await create(.draft, by: bob)
            _ = try await create(.published, by: bob)
            try await expectTotalsAreCounts()
            _ = try await writes.write { try await repository.update(id: draft.id, PostChanges(status: .published), by: ada, ifMatch: nil, in: $0) }
            _ = try await writes.write { try await repository.update(id: first.id, PostChanges(status: .draft), by: ada, ifMatch: nil, in: $0) }
            _ = try await writes.write { try await repository.update(id: first.id, PostChanges(title: "Only the title"), by: ada, ifMatch: nil, in: $0) }
            try await expectTotalsAreCounts()
            try await writes.write { try await repository.delete(id: draft.id, by: ada, in: $0) }
            try await expectTotalsAreCounts()
        }
    }

    @Test func aFeedReadWhileAWriteCommitsIsNotServedAfterTheCommit() async throws {
        try await TestDatabase.with { database in
            try await schema.apply(to: database)
            let repository = PostgresPostRepository(database: database)
            let writes = WriteUnit(database: database, producer: "posts", logger: testLogger)
            let feed = PostFilter(status: .published, authorId: nil)
            try await writes.write { transaction in
                _ = try await repository.create(
                    NewPost(title: "New", content: "Words.", status: .published, coverImage: nil), by: Caller(userId: "ada", name: "Ada"), in: transaction)
                // Another request reads the feed on another connection before this write commits.
                #expect(try await repository.list(feed, page: PageRequest()).pagination.total == 0)
            }
            #expect(try await repository.list(feed, page: PageRequest()).pagination.total == 1)
        }
    }
}
