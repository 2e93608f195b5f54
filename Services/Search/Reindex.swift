import Foundation
import Logging
import PostlyEvents
import PostlyModels
import PostlyPostgres
import PostlyService
import Synchronization

/// `postly-search reindex`: rebuilds the index from nothing while search goes on. The tables
/// are created afresh in the schema `search_rebuild`, filled by replaying `postly.posts`,
/// `postly.users` and `postly.comments` from their beginning under a consumer group of their
/// own, then switched with the live ones in one transaction. The replay goes on into the
/// switched tables until they have everything the retired ones had, so nothing the live
/// consumer applied meanwhile is missing; the row guards keep the two consumers from undoing
/// each other.
///
/// The replay has caught up once it has applied no event from before the reindex started for
/// `idleAfter` (waiting for a pause in all events never ended on a busy site). What changed
/// since the start is left out of the comparison below: both consumers apply those events,
/// and each carries its post, comment or author whole.
///
/// A replay that lacks posts, comments or authors the live tables have, or has them as they
/// were before (topics past their retention, a broker that lost them), switches nothing and
/// throws `ReindexRefusal`, unless `acceptingLosses` and the replay brought something: it
/// replaced the index with what the topics still held, even nothing (a broker that was down).
/// A replay that is behind but still applying older events (a batch that outlasted
/// `idleAfter`, a partition's backlog) is waited for first.
public func reindex(
    _ configuration: SearchConfiguration, logger: Logger, idleAfter: Duration = .seconds(2), acceptingLosses: Bool = false
) async throws -> ReindexReport {
    let kit = try ServiceKit(configuration.service, schema: schema, logger: logger)
    let group = "search-reindex-\(UUID().uuidString.lowercased())"
    /// Drops the reindex's own schemas and forgets what its consumer group applied.
    @Sendable func cleanUp(dropping schemas: String...) async throws {
        let drops = schemas.map { "DROP SCHEMA \($0) CASCADE;" }.joined(separator: " ")
        try await kit.database.withConnection { try await $0.executeScript(unescaped: drops) }
        try await kit.database.execute("DELETE FROM consumed_sequences WHERE consumer = \(group)")
    }
    return try await kit.run {
        let started = ContinuousClock.now
        // The database's clock, which stamps the change log, and, close enough, the producers'.
        let start = try await kit.database.query("SELECT now() AS now")[0].decode("now", as: Date.self)
        let target = ReindexTarget(start: start, idle: idleAfter)
        let replay = kit.consumer(of: [.posts, .users, .comments], group: group, handler: ReindexHandler(target: target))
        try await kit.database.withConnection { connection in
            try await connection.executeScript(unescaped: """
                DROP SCHEMA IF EXISTS search_rebuild CASCADE;
                CREATE SCHEMA search_rebuild;
                SET search_path = search_rebuild, public;
                \(indexTables)
                RESET search_path;
                """)
        }
        return try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await replay.run() }
            defer { tasks.cancelAll() }
            try await target.waitUntilCaughtUp(firstEventWithin: configuration.service.kafka.sessionTimeout * 6)
            let replayed = target.applied
            let built = ContinuousClock.now - started
            var lost = try await ReindexRefusal(comparing: "public", with: "search_rebuild", changedBefore: start, in: kit.database, replayed: replayed)
            while !lost.isEmpty, try await target.appliesOlderEvents(within: idleAfter * 5) {
                try await target.waitUntilCaughtUp(firstEventWithin: .zero)
                lost = try await ReindexRefusal(comparing: "public", with: "search_rebuild", changedBefore: start, in: kit.database, replayed: target.applied)
            }
            guard lost.isEmpty || (acceptingLosses && lost.replayed > 0) else {
                try await cleanUp(dropping: "search_rebuild")
                throw lost
            }
            try await kit.database.withConnection { connection in
                try await connection.executeScript(unescaped: """
                    BEGIN;
                    DROP SCHEMA IF EXISTS search_retired CASCADE;
                    CREATE SCHEMA search_retired;
                    ALTER TABLE public.documents SET SCHEMA search_retired;
                    ALTER TABLE public.authors SET SCHEMA search_retired;
                    ALTER TABLE public.comments SET SCHEMA search_retired;
                    ALTER TABLE public.lexicon SET SCHEMA search_retired;
                    ALTER TABLE public.changes SET SCHEMA search_retired;
                    ALTER TABLE search_rebuild.documents SET SCHEMA public;
                    ALTER TABLE search_rebuild.authors SET SCHEMA public;
                    ALTER TABLE search_rebuild.comments SET SCHEMA public;
                    ALTER TABLE search_rebuild.lexicon SET SCHEMA public;
                    -- A new change log: every instance loads its index again from the new tables.
                    ALTER TABLE search_rebuild.changes SET SCHEMA public;
                    -- The lexicon only grows: its words that no post replayed has now (an
                    -- edited-away word) stay, so every word an instance has in memory is in it.
                    INSERT INTO public.lexicon (word)
                    SELECT r.word FROM search_retired.lexicon r
                    WHERE NOT EXISTS (SELECT 1 FROM public.lexicon l WHERE l.word = r.word)
                    ORDER BY r.added;
                    -- Words added from now on get numbers above what every instance has loaded.
                    SELECT setval(pg_get_serial_sequence('public.lexicon', 'added'),
                                  greatest((SELECT max(added) FROM public.lexicon), (SELECT max(added) FROM search_retired.lexicon), 1));
                    COMMIT;
                    """)
            }
            target.switched()
            // What the live consumer applied to the retired tables (no longer written) that the
            // replay had not reached: waited for while it comes.
            var behind = try await ReindexRefusal(comparing: "search_retired", with: "public", in: kit.database, replayed: replayed)
            var progress = ContinuousClock.now
            while !behind.isEmpty, ContinuousClock.now - progress < idleAfter * 5 {
                try await Task.sleep(for: .milliseconds(100))
                let now = try await ReindexRefusal(comparing: "search_retired", with: "public", in: kit.database, replayed: replayed)
                if now.count < behind.count { progress = .now }
                behind = now
            }
            if !behind.isEmpty { logger.warning("the replay never brought what the retired tables had", metadata: ["missing": "\(behind)"]) }
            try await cleanUp(dropping: "search_retired", "search_rebuild")
            return ReindexReport(events: replayed, duration: built)
        }
    }
}

/// What the live tables have that the replay did not bring, or brought only as it was before
/// (an older sequence, a comment not yet deleted): a reindex switching now would lose them, or
/// bring back what they were.
public struct ReindexRefusal: Error, CustomStringConvertible {
    public var posts: Int
    public var comments: Int
    public var authors: Int
    /// The events the replay applied: none, and the broker was likely unreachable.
    public var replayed: Int

    /// Compares the tables of schema `live` with those of `rebuilt` (two of the reindex's fixed
    /// names, never text from outside), leaving out what `live`'s change log says changed at or
    /// after `changedBefore` when given.
    init(comparing live: String, with rebuilt: String, changedBefore: Date? = nil, in database: Database, replayed: Int) async throws {
        self.replayed = replayed
        let since = changedBefore ?? .distantFuture
        let row = try await database.query(
            """
            SELECT
                (SELECT count(*) FROM \(unescaped: live).documents d LEFT JOIN \(unescaped: rebuilt).documents r ON r.id = d.id
                    WHERE ((r.id IS NULL AND NOT d.deleted) OR r.sequence < d.sequence)
                      AND NOT EXISTS (SELECT 1 FROM \(unescaped: live).changes ch WHERE ch.post_id = d.id AND ch.at >= \(since)))::bigint AS posts,
                (SELECT count(*) FROM \(unescaped: live).comments c LEFT JOIN \(unescaped: rebuilt).comments r ON r.id = c.id
                    WHERE ((r.id IS NULL AND NOT c.deleted) OR (c.deleted AND NOT r.deleted))
                      AND NOT EXISTS (SELECT 1 FROM \(unescaped: live).changes ch WHERE ch.post_id = c.post_id AND ch.at >= \(since)))::bigint AS comments,
                (SELECT count(*) FROM \(unescaped: live).authors a LEFT JOIN \(unescaped: rebuilt).authors r ON r.user_id = a.user_id
                    WHERE (r.user_id IS NULL OR r.sequence < a.sequence)
                      AND NOT EXISTS (SELECT 1 FROM \(unescaped: live).changes ch WHERE ch.author_id = a.user_id AND ch.at >= \(since)))::bigint AS authors
            """)[0]
        posts = try row.decode("posts")
        comments = try row.decode("comments")
        authors = try row.decode("authors")
    }

    var isEmpty: Bool { count == 0 }
    var count: Int { posts + comments + authors }

    public var description: String {
        guard replayed > 0 else {
            return """
                the replay brought no event (the broker unreachable, or the topics empty) where the index has \(posts) posts, \
                \(comments) comments and \(authors) authors: nothing was switched, even accepting losses.
                """
        }
        return """
        the topics no longer hold \(posts) posts, \(comments) comments and \(authors) authors as the index has them: \
        nothing was switched. `postly-posts republish` sends every post again; `reindex --accept-losses` switches anyway.
        """
    }
}

public struct ReindexReport: Sendable {
    /// Events applied to the new tables before the switch.
    public var events: Int
    /// From the start to the switch.
    public var duration: Duration
}

/// Where the replay writes (the new tables, then after the switch the live ones) and how far
/// it has come.
final class ReindexTarget: Sendable {
    private struct State {
        var schema = "search_rebuild"
        var applied = 0
        var firstApplied: ContinuousClock.Instant?
        /// When a batch last held an event from before the reindex started.
        var lastOlderApplied: ContinuousClock.Instant?
        var olderBatches = 0
    }

    private let state = Mutex(State())
    /// When the reindex started: events from before it are the replay's backlog.
    private let start: Date
    private let idle: Duration

    init(start: Date, idle: Duration) {
        self.start = start
        self.idle = idle
    }

    /// Only ever one of two fixed names, never text from outside.
    var schema: String { state.withLock { $0.schema } }
    var applied: Int { state.withLock { $0.applied } }

    func record(_ events: [Event]) {
        guard !events.isEmpty else { return }
        let older = events.contains { $0.occurredAt < start }
        state.withLock { state in
            state.applied += events.count
            state.firstApplied = state.firstApplied ?? .now
            if older {
                state.lastOlderApplied = .now
                state.olderBatches += 1
            }
        }
    }

    func switched() {
        state.withLock { $0.schema = "public" }
    }

    /// Whether the replay applies a batch holding an event from before the start within `limit`.
    func appliesOlderEvents(within limit: Duration) async throws -> Bool {
        let before = state.withLock { $0.olderBatches }
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if state.withLock({ $0.olderBatches }) > before { return true }
            try await Task.sleep(for: .milliseconds(100))
        }
        return false
    }

    /// Returns once no event from before the start was applied for `idle` after a first event,
    /// or after `firstEventWithin` without any (empty topics).
    func waitUntilCaughtUp(firstEventWithin: Duration) async throws {
        let waiting = ContinuousClock.now
        while true {
            let (first, lastOlder) = state.withLock { ($0.firstApplied, $0.lastOlderApplied) }
            if let first, ContinuousClock.now - max(lastOlder ?? first, waiting) >= idle { return }
            if first == nil, ContinuousClock.now - waiting >= firstEventWithin { return }
            try await Task.sleep(for: .milliseconds(100))
        }
    }
}

/// `SearchIndexer` writing into the target's schema.
struct ReindexHandler: BatchEventHandler {
    let target: ReindexTarget
    let indexer = SearchIndexer()

    func apply(_ events: [Event], in connection: DatabaseConnection) async throws {
        try await connection.execute("SET LOCAL search_path = \(unescaped: target.schema), public")
        try await indexer.apply(events, in: connection)
        target.record(events)
    }
}
