import Foundation
import PostlyEvents
import PostlyModels
import PostlyPostgres
@testable import PostsService
import Testing
import TestSupport

/// Every instance runs the scheduler on one database: a due post is published, and announced,
/// by exactly one of them, whatever the others do or however one of them ends.
@Suite struct SchedulerInstancesTests {
    /// One instance's scheduler, on a pool of its own (named, so the test can cut it off).
    struct Instance {
        let database: Database
        let scheduler: PostScheduler

        init(_ name: String, on configuration: PostgresConfiguration, clock: TestClock) {
            var configuration = configuration
            configuration.applicationName = name
            configuration.poolSize = 2
            database = Database(configuration: configuration, logger: testLogger)
            let writes = WriteUnit(database: database, producer: "posts", clock: clock.now, logger: testLogger)
            scheduler = PostScheduler(
                repository: PostgresPostRepository(database: database, model: ReadModel(database: database, capacityBytes: 1 << 20)),
                writes: writes, bell: PostScheduler.bell(on: database), poll: .milliseconds(20), logger: testLogger)
        }
    }

    /// `count` scheduled posts of 10 authors, all due at `at`, with their lists' totals.
    static func seed(_ count: Int, dueAt at: Date, in database: Database) async throws {
        try await database.execute(
            """
            INSERT INTO posts (id, title, content, content_html, excerpt, slug, status, author_id, author_name, read_time,
                               created_at, updated_at, publish_at)
            SELECT 'post-' || i, 'Post ' || i, 'Words ' || i, '<p>Words ' || i || '</p>', 'Words ' || i, 'post-' || i, 'scheduled',
                   'author-' || (i % 10), 'Author', 1, now(), now(), \(at)
            FROM generate_series(1, \(count)) AS i
            """)
        try await database.execute(
            """
            INSERT INTO post_totals (author_id, status, slot, posts)
            SELECT author_id, 'scheduled', 0, count(*) FROM posts GROUP BY author_id
            UNION ALL SELECT '', 'scheduled', 0, count(*) FROM posts
            """)
    }

    static func scheduledLeft(in database: Database) async throws -> Int {
        try await database.query("SELECT count(*)::bigint AS n FROM posts WHERE status = 'scheduled'")[0].decode("n")
    }

    /// Every post published once at its time, with one `post.updated` saying so, and the totals
    /// moved with them.
    static func expectEachPublishedOnce(_ count: Int, at: Date, in database: Database) async throws {
        let posts = try await database.query(
            "SELECT count(*)::bigint AS n FROM posts WHERE status = 'published' AND version = 2 AND published_at = \(at) AND publish_at IS NULL")
        #expect(try posts[0].decode("n", as: Int.self) == count)
        let events = try await database.query(
            """
            SELECT count(*)::bigint AS events, count(DISTINCT key)::bigint AS posts FROM outbox
            WHERE convert_from(payload, 'UTF8')::jsonb ->> 'type' = 'post.updated'
              AND convert_from(payload, 'UTF8')::jsonb #>> '{data,status}' = 'published'
            """)
        #expect(try events[0].decode("events", as: Int.self) == count)
        #expect(try events[0].decode("posts", as: Int.self) == count)
        let sequences = try await database.query("SELECT count(*)::bigint AS n FROM event_sequences WHERE sequence <> 1")
        #expect(try sequences[0].decode("n", as: Int.self) == 0)
        let totals = try await database.query(
            "SELECT status, sum(posts)::bigint AS posts FROM post_totals WHERE author_id = '' GROUP BY status ORDER BY status")
        #expect(try totals.map { "\(try $0.decode("status", as: String.self)) \(try $0.decode("posts", as: Int.self))" } == [
            "published \(count)", "scheduled 0",
        ])
    }

    @Test func twoInstancesPublishAThousandDuePostsEachOnceWithoutDeadlock() async throws {
        try await TestDatabase.with { database in
            try await schema.apply(to: database)
            let clock = TestClock()
            let at = clock.now().addingTimeInterval(60)
            try await Self.seed(1000, dueAt: at, in: database)
            let one = Instance("scheduler-one", on: database.configuration, clock: clock)
            let two = Instance("scheduler-two", on: database.configuration, clock: clock)
            clock.advance(by: 60)
            try await withRunning([one.scheduler, two.scheduler]) {
                let done = try await eventually(within: .seconds(60)) { try await Self.scheduledLeft(in: database) == 0 }
                #expect(done)
            }
            try await Self.expectEachPublishedOnce(1000, at: at, in: database)
            let deadlocks = try await database.query("SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()")
            #expect(try deadlocks[0].decode("deadlocks", as: Int.self) == 0)
            await one.database.close()
            await two.database.close()
        }
    }

    /// One instance is cut off mid-run, as by `kill -9`: its connections end, its open
    /// transaction rolls back, and the other publishes what it had claimed.
    @Test func anInstanceCutOffMidRunLosesNothing() async throws {
        try await TestDatabase.with { database in
            try await schema.apply(to: database)
            let clock = TestClock()
            let at = clock.now().addingTimeInterval(60)
            try await Self.seed(1000, dueAt: at, in: database)
            let one = Instance("scheduler-one", on: database.configuration, clock: clock)
            let two = Instance("scheduler-two", on: database.configuration, clock: clock)
            clock.advance(by: 60)
            let dying = Task { try await withRunning([one.scheduler]) { try await Task.sleep(for: .seconds(3600)) } }
            #expect(try await eventually(within: .seconds(30)) { try await Self.scheduledLeft(in: database) < 1000 })
            try await database.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'scheduler-one'")
            dying.cancel()
            _ = await dying.result
            let left = try await Self.scheduledLeft(in: database)
            #expect(left > 0, "the first instance published everything before it was cut off")
            try await withRunning([two.scheduler]) {
                let done = try await eventually(within: .seconds(60)) { try await Self.scheduledLeft(in: database) == 0 }
                #expect(done)
            }
            try await Self.expectEachPublishedOnce(1000, at: at, in: database)
            await one.database.close()
            await two.database.close()
        }
    }

    /// A due post another instance holds (publishing it, or a PUT) stays due until that one
    /// commits: the scheduler waits before it looks again (it looked again at once, a write
    /// transaction and a query after another, as long as the lock was held).
    @Test func aDuePostHeldElsewhereIsNotLookedAtAgainAtOnce() async throws {
        try await TestDatabase.with { database in
            try await schema.apply(to: database)
            let clock = TestClock()
            try await Self.seed(1, dueAt: clock.now(), in: database)
            let instance = Instance("scheduler", on: database.configuration, clock: clock)
            try await database.whileLocked(by: { try await $0.execute("SELECT id FROM posts WHERE id = 'post-1' FOR UPDATE") }) {
                #expect(await instance.scheduler.publishDue() >= .milliseconds(20))
            }
            #expect(try await Self.scheduledLeft(in: database) == 1)
            await instance.database.close()
        }
    }
}
