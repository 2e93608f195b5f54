import Foundation
import Logging
import PostlyEvents
import PostlyKafka
import PostlyModels
import PostlyPostgres
import PostlyService
import ServiceLifecycle
import Synchronization

/// `postly-search reindex`: rebuilds the index from nothing while search goes on. The tables
/// are created afresh in the schema `search_rebuild`, filled by replaying `postly.posts`,
/// `postly.users` and `postly.comments` from their beginning under a consumer group of their
/// own, then switched with the live ones in one transaction once the replay has consumed what
/// the topics held when it looked (or was idle for `idleAfter`): a site whose events never
/// pause is never idle. The replay goes on into the switched tables until it has consumed what
/// they held at the switch, so nothing the live consumer applied meanwhile is missing; the row
/// guards keep the two consumers from undoing each other.
///
/// A replay that lacks posts, comments or authors the live tables have, or has them as they
/// were before (topics past their retention, a broker that lost them), switches nothing and
/// throws `ReindexRefusal`, unless `acceptingLosses` and the replay brought something: it
/// replaced the index with what the topics still held, even nothing (a broker that was down).
/// A replay that is behind but still applying events (a batch that outlasted `idleAfter`) is
/// waited for first.
public func reindex(
    _ configuration: SearchConfiguration, logger: Logger, idleAfter: Duration = .seconds(2), acceptingLosses: Bool = false
) async throws -> ReindexReport {
    let kit = try ServiceKit(configuration.service, schema: schema, logger: logger)
    let target = ReindexTarget()
    let group = "search-reindex-\(UUID().uuidString.lowercased())"
    let topics: [Topic] = [.posts, .users, .comments]
    let replay = kit.consumer(of: topics, group: group, handler: ReindexHandler(target: target))
    let kafka = configuration.service.kafka
    let topicEnds = try KafkaTopicEnds(configuration: kafka)
    /// Waits until the replay has consumed what the topics hold now; or, unless
    /// `untilConsumed`, until it was idle for `idleAfter` after a first event, or had none
    /// within `firstEventWithin` (empty topics). The ends are read again at each look (every
    /// second): one that went down (a broker that lost its log) is the one to reach; a partition
    /// missing from a look (its topic not there, yet) keeps its end. A Kafka error is logged
    /// and asked again.
    @Sendable func caughtUp(firstEventWithin: Duration, untilConsumed: Bool = false) async throws -> ReplayReach {
        let started = ContinuousClock.now
        let position = try await kit.database.query("SELECT coalesce(max(position), 0) AS newest FROM public.changes")[0]
            .decode("newest", as: Int64.self)
        var ends: [KafkaTopicPartition: Int64]?
        var consumed = false
        try await target.wait(orIdleFor: untilConsumed ? nil : idleAfter, firstEventWithin: firstEventWithin) {
            do {
                let now = try await topicEnds.now(of: topics.map(\.rawValue))
                var lowest = now
                for (partition, end) in ends ?? [:] { lowest[partition] = min(end, now[partition] ?? end) }
                ends = lowest
                let handled = replay.handledOffsets
                consumed = lowest.allSatisfy { partition, end in handled[partition] ?? 0 >= end }
            } catch {
                logger.warning("cannot read the topics' ends; asking again", metadata: ["error": "\(error)"])
            }
            return consumed
        }
        return ReplayReach(position: position, consumedTheEnds: consumed, took: ContinuousClock.now - started)
    }
    /// Drops the reindex's own schemas and forgets what its consumer group applied.
    @Sendable func cleanUp(dropping schemas: String...) async throws {
        let drops = schemas.map { "DROP SCHEMA \($0) CASCADE;" }.joined(separator: " ")
        try await kit.database.withConnection { try await $0.executeScript(unescaped: drops) }
        try await kit.database.execute("DELETE FROM consumed_sequences WHERE consumer = \(group)")
    }
    return try await kit.run {
        let started = ContinuousClock.now
        try await kit.database.withConnection { connection in
            try await connection.executeScript(unescaped: """
                DROP SCHEMA IF EXISTS search_rebuild CASCADE;
                CREATE SCHEMA search_rebuild;
                SET search_path = search_rebuild, public;
                \(indexTables)
                RESET search_path;
                """)
        }
        do {
            return try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask {
                    do {
                        try await replay.run()
                        target.replayStopped(nil)
                    } catch {
                        target.replayStopped(error)
                        throw error
                    }
                }
                defer { tasks.cancelAll() }
                var reach = try await caughtUp(firstEventWithin: kafka.sessionTimeout * 6)
                // What changed during a pass is left out of the comparison (its events may be on
                // their way): after a long one, pass again until one is short (ten at most).
                var passes = 1
                while reach.took > idleAfter, passes < 10 {
                    reach = try await caughtUp(firstEventWithin: .zero)
                    passes += 1
                }
                let replayed = target.applied
                let built = ContinuousClock.now - started
                var lost = try await ReindexRefusal(comparingIn: kit.database, replayed: replayed, changedUpTo: reach.position)
                // Idle before it consumed the ends: a batch may have outlasted the idle wait.
                while !lost.isEmpty, !reach.consumedTheEnds, try await target.applies(within: idleAfter * 5) {
                    reach = try await caughtUp(firstEventWithin: .zero)
                    lost = try await ReindexRefusal(comparingIn: kit.database, replayed: target.applied, changedUpTo: reach.position)
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
                // What the live consumer applied to the retired tables while the switch was coming:
                // its events are before the ends read now.
                _ = try await caughtUp(firstEventWithin: .zero, untilConsumed: true)
                try await cleanUp(dropping: "search_retired", "search_rebuild")
                return ReindexReport(events: replayed, duration: built)
            }
        } catch let stopped as ReindexTarget.ReplayStopped {
            // What no later reindex reads: the rows of the replay's group, and its schema (empty
            // once switched; the retired tables stay until the next switch).
            try? await cleanUp(dropping: "search_rebuild")
            throw stopped
        }
    }
}

/// What the live tables have that the replay did not bring, or brought only as it was before
/// (an older sequence, a comment not yet deleted): a reindex switching now would lose them, or
/// bring back what they were. Only what the live change log logged up to a position counts: a
/// change after it may come from an event the replay has not reached yet.
public struct ReindexRefusal: Error, CustomStringConvertible {
    public var posts: Int
    public var comments: Int
    public var authors: Int
    /// The events the replay applied: none, and the broker was likely unreachable.
    public var replayed: Int

    init(comparingIn database: Database, replayed: Int, changedUpTo position: Int64) async throws {
        self.replayed = replayed
        let row = try await database.query(
            """
            SELECT
                (SELECT count(*) FROM public.documents d LEFT JOIN search_rebuild.documents r ON r.id = d.id
                    WHERE ((r.id IS NULL AND NOT d.deleted) OR r.sequence < d.sequence)
                      AND NOT EXISTS (SELECT 1 FROM public.changes l WHERE l.position > \(position) AND l.post_id = d.id))::bigint AS posts,
                (SELECT count(*) FROM public.comments c LEFT JOIN search_rebuild.comments r ON r.id = c.id
                    WHERE ((r.id IS NULL AND NOT c.deleted) OR (c.deleted AND NOT r.deleted))
                      AND NOT EXISTS (SELECT 1 FROM public.changes l WHERE l.position > \(position) AND l.post_id = c.post_id))::bigint AS comments,
                (SELECT count(*) FROM public.authors a LEFT JOIN search_rebuild.authors r ON r.user_id = a.user_id
                    WHERE (r.user_id IS NULL OR r.sequence < a.sequence)
                      AND NOT EXISTS (SELECT 1 FROM public.changes l WHERE l.position > \(position) AND l.author_id = a.user_id))::bigint AS authors
            """)[0]
        posts = try row.decode("posts")
        comments = try row.decode("comments")
        authors = try row.decode("authors")
    }

    var isEmpty: Bool { posts == 0 && comments == 0 && authors == 0 }

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

/// How far a pass of the replay came: the live change log's last position, read before the
/// topics' ends (every change logged up to it came from an event before them), whether the
/// replay consumed those ends (else it fell idle), and how long the pass took.
struct ReplayReach {
    var position: Int64
    var consumedTheEnds: Bool
    var took: Duration
}

/// Where the replay writes (the new tables, then after the switch the live ones) and how far
/// it has come.
final class ReindexTarget: Sendable {
    private struct State {
        var schema = "search_rebuild"
        var applied = 0
        var lastApplied: ContinuousClock.Instant?
        /// Set once the replay ended, with its error if it threw.
        var replayStopped: (any Error)??
    }

    /// The replay ended (a fatal Kafka error, the command shutting down) before the reindex did.
    struct ReplayStopped: Error, CustomStringConvertible {
        var switched: Bool
        var error: (any Error)?
        var description: String {
            let cause = error.map { " (\($0))" } ?? ""
            return switched
                ? "the replay stopped\(cause) after the switch, before it applied what the live consumer had meanwhile: run the reindex again"
                : "the replay stopped\(cause) before the switch: nothing was switched"
        }
    }

    private let state = Mutex(State())

    /// Only ever one of two fixed names, never text from outside.
    var schema: String { state.withLock { $0.schema } }
    var applied: Int { state.withLock { $0.applied } }

    func record(_ events: Int) {
        state.withLock { state in
            state.applied += events
            state.lastApplied = .now
        }
    }

    func switched() {
        state.withLock { state in
            state.schema = "public"
            state.lastApplied = .now
        }
    }

    func replayStopped(_ error: (any Error)?) {
        state.withLock { $0.replayStopped = .some(error) }
    }

    /// Whether the replay applies another batch within `limit`.
    func applies(within limit: Duration) async throws -> Bool {
        let before = applied
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if applied > before { return true }
            try await Task.sleep(for: .milliseconds(100))
        }
        return false
    }

    /// Returns once `isDone` (asked at once, then every second); or, when `idle` is given,
    /// once nothing was applied for `idle` after a first event, or after `firstEventWithin`
    /// without any (empty topics). Throws `ReplayStopped` once the replay has stopped or the
    /// command is shutting down: neither would ever be done.
    func wait(orIdleFor idle: Duration?, firstEventWithin: Duration, until isDone: () async -> Bool) async throws {
        let start = ContinuousClock.now
        var asked: ContinuousClock.Instant?
        while true {
            let (stopped, switched) = state.withLock { ($0.replayStopped, $0.schema == "public") }
            if let stopped { throw ReplayStopped(switched: switched, error: stopped) }
            if Task.isShuttingDownGracefully { throw ReplayStopped(switched: switched, error: nil) }
            if asked.map({ ContinuousClock.now - $0 >= .seconds(1) }) ?? true {
                if await isDone() { return }
                asked = .now
            }
            if let idle {
                let last = state.withLock { $0.lastApplied }
                if let last, ContinuousClock.now - last >= idle { return }
                if last == nil, ContinuousClock.now - start >= firstEventWithin { return }
            }
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
        target.record(events.count)
    }
}
