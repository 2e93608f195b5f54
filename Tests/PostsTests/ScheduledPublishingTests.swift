import Foundation
import HTTPTypes
import PostlyEvents
import PostlyModels
import PostlyPostgres
@testable import PostsService
import Testing
import TestSupport

/// `publishAt`: a post scheduled for later is a draft for everyone but its author until the
/// scheduler publishes it, once, with one event, on whichever instance claims it.
@Suite struct ScheduledPublishingTests {
    /// An hour after the test clock's now, in whole milliseconds as the API writes it.
    static func later(_ api: PostsClient, _ seconds: TimeInterval = 3600) -> Date {
        Timestamp.parse(Timestamp.format(api.clock.now().addingTimeInterval(seconds)))!
    }

    static func body(_ fields: [String: Any]) -> String { PostsClient.json(fields) }

    /// The `post.updated` events of a post that say it is published.
    static func publishEvents(of id: String, in database: Database) async throws -> Int {
        try await database.query(
            """
            SELECT count(*)::bigint AS events FROM outbox
            WHERE key = \(id) AND convert_from(payload, 'UTF8')::jsonb ->> 'type' = 'post.updated'
              AND convert_from(payload, 'UTF8')::jsonb #>> '{data,status}' = 'published'
            """)[0].decode("events")
    }

    @Test func everyCombinationTheTableRefusesAnswers422AndChangesNothing() async throws {
        try await withPostsService { api in
            let ada = try await api.user()
            let published = try await api.create("Published", as: ada)
            let draft = try await api.create("Draft", status: .draft, as: ada)
            let soon = Timestamp.format(Self.later(api))
            let past = Timestamp.format(api.clock.now().addingTimeInterval(-1))
            let now = Timestamp.format(api.clock.now())
            let tooFar = Timestamp.format(api.clock.now().addingTimeInterval(367 * 86_400))
            let cases: [(method: HTTPRequest.Method, uri: String, body: [String: Any], field: String, reason: String)] = [
                (.post, "/api/posts", ["status": "scheduled"], "publishAt", "required when status is scheduled"),
                (.post, "/api/posts", ["status": "scheduled", "publishAt": NSNull()], "publishAt", "required when status is scheduled"),
                (.post, "/api/posts", ["publishAt": past], "publishAt", "must be in the future"),
                (.post, "/api/posts", ["status": "scheduled", "publishAt": now], "publishAt", "must be in the future"),
                (.post, "/api/posts", ["status": "scheduled", "publishAt": tooFar], "publishAt", "must be within 366 days"),
                (.post, "/api/posts", ["status": "draft", "publishAt": soon], "status", "set status to scheduled to schedule"),
                (.post, "/api/posts", ["status": "scheduled", "publishAt": "tomorrow"], "publishAt", "must be an RFC 3339 timestamp"),
                (.post, "/api/posts", ["status": "scheduled", "publishAt": 1_800_000_000], "publishAt", "must be an RFC 3339 timestamp"),
                (.put, "/api/posts/\(published.id)", ["publishAt": soon], "publishAt", "a published post cannot be scheduled"),
                (.put, "/api/posts/\(published.id)", ["status": "scheduled", "publishAt": soon], "publishAt", "a published post cannot be scheduled"),
                (.put, "/api/posts/\(published.id)", ["status": "scheduled"], "publishAt", "required when status is scheduled"),
                (.put, "/api/posts/\(draft.id)", ["publishAt": soon], "status", "set status to scheduled to schedule"),
                (.put, "/api/posts/\(draft.id)", ["status": "scheduled"], "publishAt", "required when status is scheduled"),
                (.put, "/api/posts/\(draft.id)", ["status": "published", "publishAt": past], "publishAt", "must be in the future"),
            ]
            for (method, uri, fields, field, reason) in cases {
                var body = fields
                if method == .post { body.merge(["title": "New", "content": "Words."]) { old, _ in old } }
                let answer = try await api.request(method, uri, as: ada, json: Self.body(body))
                #expect(answer.status == .unprocessableContent, "\(method) \(fields)")
                #expect(answer.problem?.errors?[field] == reason, "\(method) \(fields): \(answer.text)")
            }
            let rows = try await api.database.query("SELECT status, version FROM posts ORDER BY title DESC")
            #expect(try rows.map { try $0.decode("status", as: String.self) } == ["published", "draft"])
            #expect(try rows.map { try $0.decode("version", as: Int.self) } == [1, 1])
        }
    }

    /// "Must be in the future" is decided in the write: a replay of a create whose time has
    /// passed since answers the first answer, as every replay does.
    @Test func anIdempotentReplayAfterTheTimePassedGetsItsFirstAnswer() async throws {
        try await withPostsService { api in
            let ada = try await api.user()
            let body = Self.body(["title": "Later", "content": "Words.", "status": "scheduled", "publishAt": Timestamp.format(Self.later(api, 60))])
            let key: HTTPFields = [HTTPField.Name("Idempotency-Key")!: "schedule-1"]
            let first = try await api.request(.post, "/api/posts", as: ada, json: body, headers: key)
            #expect(first.status == .created)
            api.clock.advance(by: 120)
            let replay = try await api.request(.post, "/api/posts", as: ada, json: body, headers: key)
            #expect(replay.status == .created && replay.body == first.body)
            let fresh = try await api.request(.post, "/api/posts", as: ada, json: body)
            #expect(fresh.problem?.errors?["publishAt"] == "must be in the future")
        }
    }

    @Test func scheduleRescheduleUnscheduleAndPublishNow() async throws {
        try await withPostsService { api in
            let ada = try await api.user()
            let at = Self.later(api)
            // WordPress's rule: a future-dated publish schedules.
            let scheduled = try await api.create("Later", status: .published, publishAt: at, as: ada)
            #expect(scheduled.status == .scheduled && scheduled.publishAt == at && scheduled.publishedAt == nil)
            let viaStatus = try await api.create("Also later", status: .scheduled, publishAt: at, as: ada)
            #expect(viaStatus.status == .scheduled)

            let uri = "/api/posts/\(scheduled.id)"
            let moved = Self.later(api, 7200)
            var post = try await api.request(.put, uri, as: ada, json: Self.body(["publishAt": Timestamp.format(moved)])).post()
            #expect(post.status == .scheduled && post.publishAt == moved && post.version == 2)

            post = try await api.request(.put, uri, as: ada, json: #"{"status":"draft"}"#).post()
            #expect(post.status == .draft && post.publishAt == nil && post.publishedAt == nil)

            post = try await api.request(.put, uri, as: ada, json: Self.body(["status": "scheduled", "publishAt": Timestamp.format(at)])).post()
            #expect(post.status == .scheduled && post.publishAt == at)

            post = try await api.request(.put, uri, as: ada, json: #"{"status":"published","publishAt":null}"#).post()
            #expect(post.status == .published && post.publishAt == nil && post.publishedAt != nil)
            #expect(try await api.request(.get, uri).status == .ok)
        }
    }

    /// The unchanged iOS app's edit form sends its status picker's value with every edit and
    /// knows nothing of `publishAt`: an edit must not publish a scheduled post early.
    @Test func theAppsEditFormNeverPublishesAScheduledPostEarly() async throws {
        try await withPostsService { api in
            let ada = try await api.user()
            let at = Self.later(api)
            let post = try await api.create("Later", status: .scheduled, publishAt: at, as: ada)
            let edited = try await api.request(
                .put, "/api/posts/\(post.id)", as: ada, json: #"{"title":"Later, edited","content":"New words.","status":"published"}"#
            ).post()
            #expect(edited.title == "Later, edited" && edited.status == .scheduled && edited.publishAt == at && edited.publishedAt == nil)
            #expect(try await api.request(.get, "/api/posts/\(post.id)").status == .notFound)
        }
    }

    @Test func aScheduledPostIsADraftForEveryoneButItsAuthor() async throws {
        try await withPostsService { api in
            let ada = try await api.user()
            let bob = try await api.user("Bob")
            let post = try await api.create("Secret launch", status: .scheduled, publishAt: Self.later(api), as: ada)
            for uri in ["/api/posts/\(post.id)", "/api/posts/slug/secret-launch"] {
                #expect(try await api.request(.get, uri).status == .notFound)
                #expect(try await api.request(.get, uri, as: bob).status == .notFound)
                #expect(try await api.request(.get, uri, as: ada).post().status == .scheduled)
            }
            #expect(try await api.request(.post, "/api/posts/\(post.id)/like", as: bob).status == .notFound)
            #expect(try await api.request(.put, "/api/posts/\(post.id)", as: bob, json: #"{"title":"x"}"#).status == .notFound)
            let feed = try await api.request(.get, "/api/posts", as: bob).page()
            #expect(feed.posts.isEmpty && feed.pagination.total == 0)
            #expect(try await api.request(.get, "/api/users/\(ada.id)/posts").page().pagination.total == 0)
            #expect(try await api.request(.get, "/api/users/\(ada.id)/posts?status=scheduled", as: bob).status == .forbidden)
            #expect(try await api.request(.get, "/api/posts?status=scheduled").status == .unauthorized)
            #expect(try await api.request(.get, "/api/posts?status=scheduled", as: bob).page().posts.isEmpty)
            let mine = try await api.request(.get, "/api/posts?status=scheduled", as: ada).page()
            #expect(mine.posts.map(\.id) == [post.id] && mine.pagination.total == 1)
            #expect(try await api.request(.get, "/api/users/me/posts", as: ada).page().posts.map(\.id) == [post.id])
            #expect(try await api.request(.get, "/api/users/\(ada.id)/posts?status=scheduled", as: ada).page().posts.map(\.id) == [post.id])
        }
    }

    /// The scheduler publishes a due post with the write unit's clock: its `publishedAt` is the
    /// time it was scheduled for, its one event says `published`, and the lists and totals the
    /// read model held before show it.
    @Test func aDuePostIsPublishedOnceAndJoinsTheListsItsReadersHeld() async throws {
        try await withPostsService(schedulerPoll: .milliseconds(50)) { api in
            let ada = try await api.user()
            let bob = try await api.user("Bob")
            let at = Self.later(api, 60)
            let post = try await api.create("Due", status: .scheduled, publishAt: at, as: ada)
            // The read model holds these pages, and the 404, from now on.
            #expect(try await api.request(.get, "/api/posts").page().pagination.total == 0)
            #expect(try await api.request(.get, "/api/posts?status=scheduled", as: ada).page().pagination.total == 1)
            #expect(try await api.request(.get, "/api/posts/\(post.id)", as: bob).status == .notFound)
            try await Task.sleep(for: .milliseconds(200))
            #expect(try await api.request(.get, "/api/posts/\(post.id)", as: bob).status == .notFound)

            api.clock.advance(by: 61)
            #expect(try await eventually(within: .seconds(5)) { try await api.request(.get, "/api/posts/\(post.id)", as: bob).status == .ok })
            let published = try await api.request(.get, "/api/posts/\(post.id)", as: bob).post()
            #expect(published.status == .published && published.publishedAt == at && published.publishAt == nil && published.version == 2)
            let feed = try await api.request(.get, "/api/posts").page()
            #expect(feed.posts.map(\.id) == [post.id] && feed.pagination.total == 1)
            #expect(try await api.request(.get, "/api/posts?status=scheduled", as: ada).page().pagination.total == 0)
            #expect(try await api.request(.get, "/api/users/\(ada.id)/posts").page().pagination.total == 1)
            try await Task.sleep(for: .milliseconds(300))
            #expect(try await Self.publishEvents(of: post.id, in: api.database) == 1)
        }
    }

    /// The wall clock: a post due in a second is public at most 1.5 s after its time.
    @Test func aDuePostIsPublicWithinASecondAndAHalf() async throws {
        try await withPostsService(realClock: true) { api in
            let ada = try await api.user()
            let at = Date().addingTimeInterval(1)
            let post = try await api.create("Soon", status: .scheduled, publishAt: at, as: ada)
            #expect(try await eventually(within: .seconds(5)) { try await api.request(.get, "/api/posts/\(post.id)").status == .ok })
            #expect(Date().timeIntervalSince(at) <= 1.5)
        }
    }

    /// A post due in an hour moved to a second from now: the scheduler, asleep until its next
    /// look (30 s here), wakes for it.
    @Test func aPostMovedSoonerIsPublishedOnTime() async throws {
        try await withPostsService(schedulerPoll: .seconds(30), realClock: true) { api in
            let ada = try await api.user()
            let post = try await api.create("Later", status: .scheduled, publishAt: Date().addingTimeInterval(3600), as: ada)
            try await Task.sleep(for: .milliseconds(200))
            let at = Date().addingTimeInterval(1)
            let moved = try await api.request(.put, "/api/posts/\(post.id)", as: ada, json: PostsClient.json(["publishAt": Timestamp.format(at)]))
            #expect(moved.status == .ok, "\(moved.text)")
            #expect(try await eventually(within: .seconds(5)) { try await api.request(.get, "/api/posts/\(post.id)").status == .ok })
            #expect(Date().timeIntervalSince(at) <= 1.5)
        }
    }

    /// An author's edit and the scheduler serialize on the post's row: an edit with the
    /// scheduled version's `If-Match` either unpublishes before the publish (draft, no publish
    /// event) or meets the published post (412, one publish event). 200 times.
    @Test func anEditRacingTheDueTimeEndsConsistent() async throws {
        try await withPostsService(poolSize: 16, schedulerPoll: .milliseconds(5)) { api in
            let ada = try await api.user()
            let at = Self.later(api, 60)
            var ids: [String] = []
            for index in 0..<200 { ids.append(try await api.create("Race \(index)", status: .scheduled, publishAt: at, as: ada).id) }
            api.clock.advance(by: 60)
            let answers = try await withThrowingTaskGroup(of: (String, HTTPResponse.Status).self) { group in
                for id in ids {
                    group.addTask {
                        let answer = try await api.request(.put, "/api/posts/\(id)", as: ada, json: #"{"status":"draft"}"#, headers: [.ifMatch: "\"1\""])
                        return (id, answer.status)
                    }
                }
                return try await group.reduce(into: [String: HTTPResponse.Status]()) { $0[$1.0] = $1.1 }
            }
            try await Task.sleep(for: .milliseconds(300))
            var outcomes: [String: Int] = [:]
            for id in ids {
                let status = try await api.database.query("SELECT status FROM posts WHERE id = \(id)")[0].decode("status", as: String.self)
                let events = try await Self.publishEvents(of: id, in: api.database)
                switch (status, answers[id], events) {
                case ("draft", .ok, 0): outcomes["unpublished first", default: 0] += 1
                case ("published", .preconditionFailed, 1): outcomes["published first", default: 0] += 1
                default: Issue.record("\(id): \(status), answered \(String(describing: answers[id])), \(events) publish events")
                }
            }
            #expect(outcomes.values.reduce(0, +) == 200, "\(outcomes)")
            let totals = try await api.database.query(
                "SELECT status, sum(posts)::bigint AS posts FROM post_totals WHERE author_id = '' GROUP BY status ORDER BY status")
            let byStatus = Dictionary(uniqueKeysWithValues: try totals.map { (try $0.decode("status", as: String.self), try $0.decode("posts", as: Int.self)) })
            #expect(byStatus["draft", default: 0] == outcomes["unpublished first", default: 0])
            #expect(byStatus["published", default: 0] == outcomes["published first", default: 0])
            #expect(byStatus["scheduled", default: 0] == 0)
        }
    }
}
