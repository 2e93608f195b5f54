import Foundation
import HTTPTypes
import PostlyEvents
import PostlyModels
import PostlyPostgres
@testable import PostsService
import Testing
import TestSupport

/// `GET /api/changes`: an offline client catches up from its cursor, missing nothing, and sees
/// of others' posts only what it may.
@Suite(.serialized) struct ChangeFeedTests {
    /// A page as a client decodes it.
    struct Page: Decodable {
        struct Entry: Decodable {
            var kind: String
            var id: String
            var deleted: Bool
            var reason: String?
            var postId: String?
            var post: Post?
            var comment: PostlyModels.Comment?
            var author: Author?
        }

        var changes: [Entry]
        var next: String
        var more: Bool
    }

    static func page(_ api: PostsClient, since: String? = nil, as user: TestUser? = nil, query: String = "") async throws -> Page {
        var uri = "/api/changes?limit=500" + query
        if let since { uri += "&since=\(since)" }
        let answer = try await api.request(.get, uri, as: user)
        guard answer.status == .ok else { throw UnexpectedAnswer(answer: answer) }
        #expect(answer.headers[.cacheControl] == "no-store")
        return try PostlyJSON.decoder().decode(Page.self, from: answer.body)
    }

    /// The entries after `since` (nil: a resync) until there are `count`, following the
    /// cursors: a transaction anywhere in the cluster (other tests') may hold the feed back a
    /// moment; then one more look, so an entry too many shows.
    static func collect(_ api: PostsClient, since: String? = nil, as user: TestUser? = nil, count: Int) async throws -> Page {
        var collected = Page(changes: [], next: since ?? "", more: false)
        var cursor = since
        let deadline = ContinuousClock.now + .seconds(20)
        while collected.changes.count < count, ContinuousClock.now < deadline {
            let page = try await Self.page(api, since: cursor, as: user, query: "&wait=1")
            collected.changes += page.changes
            cursor = page.next
        }
        let last = try await Self.page(api, since: cursor, as: user)
        collected.changes += last.changes
        collected.next = last.next
        return collected
    }

    /// A comment as the comments service's event brings it, applied as the consumer applies it.
    static func comment(
        _ id: String, on postId: String, by author: TestUser, content: String = "Nice", deleted: Bool = false, in database: Database
    ) async throws {
        let comment = PostlyModels.Comment(id: id, postId: postId, content: content, author: Author(userId: author.id, name: author.name), createdAt: Date())
        let snapshot = CommentSnapshot(comment: comment, postTitle: "", postAuthorId: "")
        let event = Event(
            producer: "comments", key: postId, sequence: 1, actorId: author.id, data: deleted ? .commentDeleted(snapshot) : .commentCreated(snapshot))
        try await database.transaction { try await ProjectionHandler().apply(event, in: $0) }
    }

    /// A post as a follower of the feed knows it.
    struct Followed: Sendable, Equatable {
        var title: String
        var version: Int
        var comments: Set<String>
    }

    /// Reads the page after `since` and applies it to `state`, as a client would.
    static func follow(_ api: PostsClient, since: String?, as reader: TestUser, into state: Locked<[String: Followed]>) async throws -> Page {
        let page = try await Self.page(api, since: since, as: reader)
        state.withLock { posts in
            for entry in page.changes {
                switch entry.kind {
                case "post":
                    posts[entry.id] = entry.post.map { Followed(title: $0.title, version: $0.version, comments: Set($0.comments.map(\.id))) }
                case "comment":
                    guard let postId = entry.postId else { break }
                    if entry.deleted { posts[postId]?.comments.remove(entry.id) } else { posts[postId]?.comments.insert(entry.id) }
                default: break
                }
            }
        }
        return page
    }

    /// A page is written by `JSONWriter`: the same bytes as `JSONEncoder` with sorted keys,
    /// for each kind of entry and a tombstone.
    @Test func aPageIsWrittenAsTheEncoderWritesIt() throws {
        let at = Date(timeIntervalSince1970: 1_795_000_000.123)
        let author = Author(userId: "u1", name: "Ada \"Quote\" \u{1F600}", profilePicture: nil)
        let comment = PostlyModels.Comment(id: "c1", postId: "p1", content: "Nice\n</script>", author: author, createdAt: at)
        let post = Post(
            id: "p1", title: "T\u{0007}", content: "Body", contentHtml: "<p>Body</p>", excerpt: "Body", slug: "t", status: .published,
            coverImage: nil, author: author, views: 3, likes: 1, comments: [comment], commentsCount: 1, readTime: 1,
            createdAt: at, updatedAt: at, publishedAt: at, version: 2)
        let entries = [
            ChangeEntry(kind: .post, id: "p1", changedAt: at, post: post),
            ChangeEntry(kind: .post, id: "p2", changedAt: at, reason: "unpublished"),
            ChangeEntry(kind: .comment, id: "c1", changedAt: at, postId: "p1", comment: comment),
            ChangeEntry(kind: .comment, id: "c2", changedAt: at, postId: "p1"),
            ChangeEntry(kind: .author, id: "u1", changedAt: at, author: author),
        ]
        for page in [ChangePage(changes: entries, next: "cursor", more: true), ChangePage(changes: [], next: "", more: false)] {
            #expect(try PostlyJSON.encode(page) == Array(PostlyJSON.encoder().encode(page)))
        }
    }

    @Test func othersSeeTombstonesOfDeletedAndUnpublishedPostsAndNeverADraft() async throws {
        try await withPostsService { api in
            let ada = try await api.user()
            let bob = try await api.user("Bob")
            let published = try await api.create("Public", as: ada)
            let draft = try await api.create("Never public", status: .draft, as: ada)
            let scheduled = try await api.create("Later", status: .scheduled, publishAt: api.clock.now().addingTimeInterval(3600), as: ada)
            try await Self.comment("c1", on: published.id, by: bob, in: api.database)
            try await Self.comment("c2", on: draft.id, by: ada, in: api.database)

            let bobsStart = try await Self.collect(api, as: bob, count: 2)
            #expect(bobsStart.changes.map(\.id) == [published.id, "c1"])
            #expect(bobsStart.changes.first?.post?.contentHtml != nil && bobsStart.changes.last?.comment?.content == "Nice")
            let adasStart = try await Self.collect(api, as: ada, count: 5)
            #expect(adasStart.changes.map(\.id) == [published.id, draft.id, scheduled.id, "c1", "c2"])
            #expect(adasStart.changes.map { $0.post?.status } == [.published, .draft, .scheduled, nil, nil])
            #expect(try await Self.collect(api, count: 2).changes.map(\.id) == [published.id, "c1"])

            try await api.request(.put, "/api/posts/\(published.id)", as: ada, json: #"{"status":"draft"}"#)
            try await api.request(.delete, "/api/posts/\(draft.id)", as: ada)
            let bobsNext = try await Self.collect(api, since: bobsStart.next, as: bob, count: 1)
            #expect(bobsNext.changes.map(\.id) == [published.id])
            #expect(bobsNext.changes.first?.deleted == true && bobsNext.changes.first?.reason == "unpublished")
            let adasNext = try await Self.collect(api, since: adasStart.next, as: ada, count: 2)
            #expect(adasNext.changes.map(\.id) == [published.id, draft.id])
            #expect(adasNext.changes.first?.post?.status == .draft && adasNext.changes.last?.reason == "deleted")

            try await api.request(.put, "/api/posts/\(published.id)", as: ada, json: #"{"status":"published"}"#)
            try await api.request(.delete, "/api/posts/\(published.id)", as: ada)
            let bobsLast = try await Self.collect(api, since: bobsNext.next, as: bob, count: 1)
            #expect(bobsLast.changes.map(\.id) == [published.id] && bobsLast.changes.first?.reason == "deleted")
            // A resync shows tombstones inside the retention, never the draft.
            #expect(try await Self.collect(api, as: bob, count: 1).changes.map(\.id) == [published.id])
        }
    }

    /// An offline client's token expired: read as anyone's, its page would have moved its
    /// cursor past the author's own draft for good.
    @Test func aRefusedTokenIsAnsweredAndItsCursorMissesNothing() async throws {
        try await withPostsService { api in
            let ada = try await api.user()
            let start = try await Self.page(api, since: "now", as: ada)
            let draft = try await api.create("Mine", status: .draft, as: ada)
            let expired = try await api.harness.issuer.token(userId: ada.id, lifetime: -5)
            let refused = try await api.request(.get, "/api/changes?since=\(start.next)", headers: [.authorization: "Bearer \(expired)"])
            #expect(refused.status == .unauthorized, "\(refused.text)")
            #expect(try await Self.collect(api, since: start.next, as: ada, count: 1).changes.map(\.id) == [draft.id])
        }
    }

    @Test func aPublishedScheduledPostAndAnAuthorsNewNameAppear() async throws {
        try await withPostsService(schedulerPoll: .milliseconds(20)) { api in
            let ada = try await api.user()
            let post = try await api.create("Later", status: .scheduled, publishAt: api.clock.now().addingTimeInterval(60), as: ada)
            let start = try await Self.page(api, since: "now")
            #expect(start.changes.isEmpty)
            api.clock.advance(by: 61)
            #expect(try await Self.collect(api, since: start.next, count: 1).changes.map(\.id) == [post.id])
            let renamed = Event(
                producer: "auth", key: ada.id, sequence: 2, actorId: ada.id,
                data: .userUpdated(UserSnapshot(userId: ada.id, name: "Ada King", profilePicture: nil)))
            try await api.database.transaction { try await ProjectionHandler().apply(renamed, in: $0) }
            let page = try await Self.collect(api, since: start.next, count: 2)
            #expect(page.changes.map(\.kind) == ["post", "author"])
            #expect(page.changes.last?.author?.name == "Ada King")
        }
    }

    /// Anyone could list every account's id, name and picture: an author's row shows to others
    /// once they have written something public, and always to themselves.
    @Test func anAuthorWithNothingPublicIsListedToThemselvesOnly() async throws {
        try await withPostsService { api in
            let bob = try await api.user("Bob")
            let renamed = Event(
                producer: "auth", key: bob.id, sequence: 1, actorId: bob.id,
                data: .userUpdated(UserSnapshot(userId: bob.id, name: "Bob Smith", profilePicture: nil)))
            try await api.database.transaction { try await ProjectionHandler().apply(renamed, in: $0) }
            func listed(as user: TestUser?) async throws -> Bool {
                try await Self.page(api, as: user).changes.contains { $0.kind == "author" && $0.id == bob.id }
            }
            #expect(try await !listed(as: nil))
            #expect(try await listed(as: bob))
            _ = try await api.create("Draft", status: .draft, as: bob)
            #expect(try await !listed(as: nil), "a draft is not public")
            _ = try await api.create("Out", status: .published, as: bob)
            #expect(try await listed(as: nil))
        }
    }

    @Test func badCursorsAndQueriesAnswer400AndOldOnes410() async throws {
        try await withPostsService { api in
            let ada = try await api.user()
            for (query, code) in [
                ("since=abc", "invalid_cursor"), ("since=eyJ2IjoyfQ", "invalid_cursor"), ("limit=0", "invalid_query"),
                ("limit=501", "invalid_query"), ("limit=x", "invalid_query"), ("wait=31", "invalid_query"), ("wait=-1", "invalid_query"),
            ] {
                let answer = try await api.request(.get, "/api/changes?\(query)")
                #expect(answer.status == .badRequest && answer.problem?.code == code, "\(query): \(answer.text)")
            }
            let before = try await Self.page(api, since: "now")
            let post = try await api.create(as: ada)
            try await api.request(.delete, "/api/posts/\(post.id)", as: ada)
            let after = try await Self.collect(api, since: before.next, count: 1)
            #expect(after.changes.map(\.reason) == ["deleted"])

            // The purge runs on the write unit's clock: a month later the tombstone goes, and a
            // cursor from before it could have missed it.
            let feed = ChangeFeed(database: api.database, logger: testLogger)
            #expect(try await feed.purgeTombstones(before: api.clock.now().addingTimeInterval(-30 * 86_400)) == 0)
            api.clock.advance(by: 31 * 86_400)
            #expect(try await feed.purgeTombstones(before: api.clock.now().addingTimeInterval(-30 * 86_400)) == 1)
            let expired = try await api.request(.get, "/api/changes?since=\(before.next)")
            #expect(expired.status == .gone && expired.problem?.code == "cursor_expired")
            #expect(try await api.request(.get, "/api/changes?since=\(after.next)").status == .ok)

            try await api.database.execute("UPDATE changes_meta SET epoch = 'another'")
            #expect(try await api.request(.get, "/api/changes?since=\(after.next)").status == .gone)
            #expect(try await Self.page(api).changes.isEmpty)
        }
    }

    /// A resync that begins after a purge pages through to its end, and a quiet log's `now`
    /// can be read from: their cursors lie before the horizon (the log is ordered by last
    /// change, and the purged tombstone was the newest), but nothing was purged since they were
    /// given out. Every page after a resync's first answered 410, and the client began again.
    @Test func cursorsGivenOutAfterAPurgeCanBeReadFrom() async throws {
        try await withPostsService { api in
            let ada = try await api.user()
            var published: Set<String> = []
            for _ in 0..<3 { published.insert(try await api.create(status: .published, as: ada).id) }
            let gone = try await api.create(status: .published, as: ada)
            _ = try await Self.collect(api, count: 4)
            let beforeDeletion = try await Self.page(api, since: "now")
            try await api.request(.delete, "/api/posts/\(gone.id)", as: ada)
            _ = try await Self.collect(api, since: beforeDeletion.next, count: 1)
            let feed = ChangeFeed(database: api.database, logger: testLogger)
            api.clock.advance(by: 31 * 86_400)
            #expect(try await feed.purgeTombstones(before: api.clock.now().addingTimeInterval(-30 * 86_400)) == 1)

            var seen: Set<String> = []
            var since: String?
            for _ in 0..<20 {
                let answer = try await api.request(.get, "/api/changes?limit=1" + (since.map { "&since=\($0)" } ?? ""))
                try #require(answer.status == .ok, "\(answer.status): \(answer.text)")
                let page = try PostlyJSON.decoder().decode(Page.self, from: answer.body)
                seen.formUnion(page.changes.map(\.id))
                since = page.next
                if !page.more { break }
            }
            #expect(published.isSubset(of: seen))
            let now = try await Self.page(api, since: "now")
            #expect(try await api.request(.get, "/api/changes?since=\(now.next)").status == .ok)
            // A cursor given out before the purge, before its horizon, may have missed it.
            #expect(try await api.request(.get, "/api/changes?since=\(beforeDeletion.next)").status == .gone)
        }
    }

    /// A page holds at most 4 MiB, however many entries were asked for, and the cursor goes on
    /// from where it was cut: a client on a phone never gets a page it cannot hold.
    @Test func aPageStopsAtFourMebibytesAndTheNextGoesOn() async throws {
        try await withPostsService { api in
            let ada = try await api.user()
            let before = try await Self.page(api, since: "now")
            let content = String(repeating: "word ", count: 20_000)
            var ids: Set<String> = []
            for n in 1...25 { ids.insert(try await api.create("Long \(n)", content: content, as: ada).id) }
            _ = try await Self.collect(api, since: before.next, count: 25)

            let answer = try await api.request(.get, "/api/changes?limit=500&since=\(before.next)")
            let first = try PostlyJSON.decoder().decode(Page.self, from: answer.body)
            #expect(answer.body.count <= 4 << 20, "\(answer.body.count) bytes")
            #expect(first.more && !first.changes.isEmpty && first.changes.count < 25)
            let rest = try await Self.collect(api, since: first.next, count: 25 - first.changes.count)
            #expect(Set((first.changes + rest.changes).map(\.id)) == ids)
        }
    }

    /// Texts count as JSON writes them: a page of posts of control characters (six bytes each
    /// in JSON) stays within 4 MiB (it went out at about five times that).
    @Test func aPageOfEscapedTextsStaysWithinFourMebibytes() async throws {
        try await withPostsService { api in
            let ada = try await api.user()
            let before = try await Self.page(api, since: "now")
            let content = String(repeating: "\u{1}", count: 100_000)
            for n in 1...8 { _ = try await api.create("Odd \(n)", content: content, as: ada) }
            _ = try await Self.collect(api, since: before.next, count: 8)
            let answer = try await api.request(.get, "/api/changes?limit=500&since=\(before.next)")
            #expect(answer.status == .ok)
            #expect(answer.body.count <= 4 << 20, "\(answer.body.count) bytes")
        }
    }

    /// A page's entries are cut by their texts' sizes before the texts are read: 500 posts of
    /// a megabyte were read whole for one request, and then cut.
    @Test func aPagesPostsAreCutBeforeTheyAreRead() async throws {
        try await withPostsService { api in
            let ada = try await api.user()
            let feed = ChangeFeed(database: api.database, logger: testLogger)
            let start = try await feed.now()
            // About 800 KB each, with their HTML: 5 in 4 MiB, 6 past it.
            let content = String(repeating: "🍮", count: 100_000)
            for n in 1...12 { _ = try await api.create("Long \(n)", content: content, as: ada) }
            // Readable once every older transaction of the cluster (other tests') has ended.
            func readable(_ visibility: ChangeLog.Visibility) async throws -> [ChangeFeed.Row] {
                var rows: [ChangeFeed.Row] = []
                _ = try await eventually {
                    rows = try await feed.rows(after: start, upTo: try await feed.now(), limit: 100).filter { $0.visibility == visibility }
                    return rows.count == 12
                }
                return rows
            }
            let rows = try await readable(.public)
            #expect(rows.count == 12)
            func fitting(_ rows: [ChangeFeed.Row], viewer: String?) async throws -> Int {
                try await api.database.withConnection { try await ChangeFeed.fitting(rows, viewer: viewer, in: $0) }
            }
            #expect(try await fitting(rows, viewer: nil) == 5)
            // One entry however large: a page is never empty.
            #expect(try await fitting(Array(rows.prefix(1)), viewer: nil) == 1)
            // Drafts now: to others, tombstones of a few bytes; to their author, whole.
            for row in rows { _ = try await api.request(.put, "/api/posts/\(row.id)", as: ada, json: #"{"status":"draft"}"#) }
            let drafted = try await readable(.private)
            #expect(try await fitting(drafted, viewer: nil) == 12)
            #expect(try await fitting(drafted, viewer: ada.id) == 5)
        }
    }

    /// An entry over 4 MiB on its own is a page of its own (at least one entry): the page was
    /// not cut at all, and held every entry asked for.
    @Test func anEntryOverFourMebibytesIsAPageOfItsOwn() async throws {
        try await withPostsService { api in
            let ada = try await api.user()
            let post = try await api.create("Commented", as: ada)
            let before = try await Self.page(api, since: "now")
            try await Self.comment("long", on: post.id, by: ada, content: String(repeating: "x", count: 5 << 20), in: api.database)
            let after = try await api.create("After", as: ada)
            _ = try await Self.collect(api, since: before.next, count: 2)

            let first = try await Self.page(api, since: before.next)
            #expect(first.changes.map(\.id) == ["long"])
            #expect(first.more)
            #expect(try await Self.page(api, since: first.next).changes.map(\.id) == [after.id])
        }
    }

    /// A log restored into another cluster (its transaction ids ahead of this cluster's): at
    /// start its entries move to the present and a new epoch makes every old cursor answer
    /// 410, so clients resync instead of missing what lies between; nothing is lost.
    @Test func aLogRestoredIntoAnotherClusterStartsANewEpoch() async throws {
        try await withPostsService { api in
            let ada = try await api.user()
            let before = try await Self.page(api, since: "now")
            let post = try await api.create(as: ada)
            let after = try await Self.collect(api, since: before.next, count: 1)
            let feed = ChangeFeed(database: api.database, logger: testLogger)
            try await feed.checkEpoch()
            #expect(try await api.request(.get, "/api/changes?since=\(after.next)").status == .ok, "this cluster's own log keeps its epoch")

            // What a logical restore leaves: transaction ids of a cluster further along.
            try await api.database.execute("UPDATE changes SET txid = (pg_current_xact_id()::text::bigint + 1000000)::text::xid8")
            try await feed.checkEpoch()
            let old = try await api.request(.get, "/api/changes?since=\(after.next)")
            #expect(old.status == .gone && old.problem?.code == "cursor_expired", "\(old.text)")
            let resync = try await Self.collect(api, count: 1)
            #expect(resync.changes.map(\.id) == [post.id])
            #expect(try await Self.page(api, since: resync.next).changes.isEmpty)
        }
    }

    /// A database restored to an earlier point in time keeps its log's epoch but gives out its
    /// later transaction ids again: a cursor past them would skip what they write, so it
    /// answers 410 and the client resyncs.
    @Test func aCursorAheadOfTheDatabaseIsExpired() async throws {
        try await withPostsService { api in
            let ada = try await api.user()
            _ = try await api.create(as: ada)
            let page = try await Self.page(api, since: nil)
            var cursor = try #require(ChangeCursor(token: page.next))
            #expect(try await api.request(.get, "/api/changes?since=\(cursor.token)").status == .ok)
            cursor.txid += 1_000_000
            let ahead = try await api.request(.get, "/api/changes?since=\(cursor.token)")
            #expect(ahead.status == .gone && ahead.problem?.code == "cursor_expired", "\(ahead.text)")
        }
    }

    /// `since=now` is after the latest transaction by number: transaction 10 comes after 9,
    /// which its text form would sort after it.
    @Test func sinceNowIsAfterTheLatestTransactionByNumber() async throws {
        try await withPostsService { api in
            try await api.database.execute("DELETE FROM changes")
            try await api.database.execute(
                """
                INSERT INTO changes (kind, id, post_id, author_id, visibility, txid, seq)
                VALUES ('post', 'nine', 'nine', 'ada', 'public', '9', 1), ('post', 'ten', 'ten', 'ada', 'public', '10', 2)
                """)
            let now = try await ChangeFeed(database: api.database, logger: testLogger).now()
            #expect(now.txid == 10 && now.seq == 2)
        }
    }

    @Test func aWriteWakesAWaitingRequestWithinASecond() async throws {
        try await withPostsService { api in
            let ada = try await api.user()
            let start = try await Self.page(api, since: "now")
            let waiting = Task {
                let started = ContinuousClock.now
                let page = try await Self.page(api, since: start.next, query: "&wait=30")
                return (page, started.duration(to: .now))
            }
            try await Task.sleep(for: .milliseconds(500))
            let written = ContinuousClock.now
            let post = try await api.create(as: ada)
            let (page, _) = try await waiting.value
            #expect(page.changes.map(\.id) == [post.id])
            #expect(written.duration(to: .now) < .seconds(1))

            // Nothing new: the same cursor after the wait.
            let quiet = try await Self.page(api, since: page.next, query: "&wait=1")
            #expect(quiet.changes.isEmpty && quiet.next == page.next)
        }
    }

    /// Waiting requests cost the database one look every half second for all of them, not
    /// two a second each: while forty of them wait three seconds, the database counts fewer
    /// than 120 transactions, the service's own loops and the statistics' lag included (12
    /// here, 42 on a fresh machine; 286 when each looked for itself). Another instance's write
    /// still wakes them all.
    @Test func waitingRequestsShareOneLookAtTheDatabase() async throws {
        try await withPostsService { api in
            let ada = try await api.user()
            let post = try await api.create(as: ada)
            let start = try await Self.page(api, since: "now")
            let waiting = Task {
                try await withThrowingTaskGroup(of: Page.self) { group in
                    for _ in 0..<40 { group.addTask { try await Self.page(api, since: start.next, query: "&wait=10") } }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
            }
            let commits: SQL = "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()"
            try await Task.sleep(for: .seconds(1))
            let before = try await api.database.query(commits)[0].decode("xact_commit", as: Int64.self)
            try await Task.sleep(for: .seconds(3))
            let after = try await api.database.query(commits)[0].decode("xact_commit", as: Int64.self)
            #expect(after - before < 120, "\(after - before) transactions while 40 requests waited")

            // Written behind the service's back, as another instance writes: no bell rings here.
            try await api.database.execute("UPDATE posts SET title = 'Elsewhere', version = version + 1 WHERE id = \(post.id)")
            try await api.database.transaction { try await ChangeLog.post(post.id, authorId: ada.id, status: .published, in: $0) }
            let pages = try await waiting.value
            #expect(pages.count == 40)
            #expect(pages.allSatisfy { $0.changes.map(\.id).contains(post.id) })
        }
    }

    /// A transaction that began before others and commits after them holds the feed back
    /// until it commits; then its change comes too, not skipped behind a later cursor.
    @Test func aTransactionHeldOpenDelaysTheFeedWithoutLosingAChange() async throws {
        try await withPostsService { api in
            let ada = try await api.user()
            let early = try await api.create("Early", as: ada)
            let start = try await Self.page(api, since: "now")
            let holding = Task {
                try await api.database.transaction { connection in
                    try await connection.execute("UPDATE posts SET title = 'Committed late', version = version + 1 WHERE id = \(early.id)")
                    try await ChangeLog.post(early.id, authorId: ada.id, status: .published, in: connection)
                    try await Task.sleep(for: .seconds(3))
                }
            }
            try await Task.sleep(for: .milliseconds(300))
            let later = try await api.create("Later", as: ada)
            let during = try await Self.page(api, since: start.next)
            #expect(during.changes.isEmpty)
            try await holding.value
            let after = try await Self.collect(api, since: during.next, count: 2)
            #expect(after.changes.map(\.id) == [early.id, later.id])
            #expect(after.changes.first?.post?.title == "Committed late")
        }
    }

    /// 32 writers create, edit, unpublish, delete and comment for 30 s while a reader follows
    /// the feed from its cursors; what the reader ends with is what the posts are.
    @Test func aReaderFollowingThirtyTwoWritersMissesNothing() async throws {
        try await withPostsService(poolSize: 16) { api in
            var writers: [TestUser] = []
            for index in 0..<32 { writers.append(try await api.user("Writer \(index)")) }
            let reader = try await api.user("Reader")
            let deadline = ContinuousClock.now + .seconds(30)
            let state = Locked([String: Followed]())
            let follower = Task {
                var cursor: String?
                while ContinuousClock.now < deadline { cursor = try await Self.follow(api, since: cursor, as: reader, into: state).next }
                return cursor
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for writer in writers {
                    group.addTask {
                        var mine: [String] = []
                        var step = 0
                        while ContinuousClock.now < deadline {
                            step += 1
                            let choice = Int.random(in: 0..<10)
                            if mine.isEmpty || choice < 3 {
                                mine.append(try await api.create("Post \(step)", status: Bool.random() ? .published : .draft, as: writer).id)
                            } else if choice < 6 {
                                try await api.request(.put, "/api/posts/\(mine.randomElement()!)", as: writer, json: #"{"title":"Edit \#(step)"}"#)
                            } else if choice < 7 {
                                let status = Bool.random() ? "draft" : "published"
                                try await api.request(.put, "/api/posts/\(mine.randomElement()!)", as: writer, json: #"{"status":"\#(status)"}"#)
                            } else if choice < 8 {
                                try await api.request(.delete, "/api/posts/\(mine.removeLast())", as: writer)
                            } else {
                                let postId = mine.randomElement()!
                                let id = "\(writer.id)-\(step)"
                                try await Self.comment(id, on: postId, by: writer, in: api.database)
                                if Bool.random() { try await Self.comment(id, on: postId, by: writer, deleted: true, in: api.database) }
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
            let rows = try await api.database.query("SELECT id, title, version FROM posts WHERE status = 'published'")
            var expected: [String: Followed] = [:]
            for row in rows { expected[try row.decode("id")] = Followed(title: try row.decode("title"), version: try row.decode("version"), comments: []) }
            for row in try await api.database.query("SELECT id, post_id FROM comments") {
                let postId: String = try row.decode("post_id")
                expected[postId]?.comments.insert(try row.decode("id"))
            }
            // Caught up is "nothing more readable now": a transaction still open anywhere in the
            // cluster (a background job's, another database's) holds the last writes back a moment
            // (the xmin rule). So the reader keeps following for a while; a change its cursor had
            // skipped would never come, and the comparison below would fail.
            var cursor = try await follower.value
            let patience = ContinuousClock.now + .seconds(10)
            repeat {
                while true {
                    let page = try await Self.follow(api, since: cursor, as: reader, into: state)
                    cursor = page.next
                    if !page.more { break }
                }
                if state.value == expected { break }
                try await Task.sleep(for: .milliseconds(200))
            } while ContinuousClock.now < patience
            let followed = state.value
            #expect(rows.count > 100, "the writers wrote too little to tell")
            #expect(Set(followed.keys) == Set(expected.keys))
            let differing = expected.filter { id, post in
                followed[id] != post
            }
            #expect(differing.isEmpty, "\(differing.count) posts differ")
        }
    }
}

