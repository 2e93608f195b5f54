import Foundation
import PostlyPostgres

/// One activity on its way to one inbox.
struct Delivery: Sendable, Equatable {
    var id: Int64
    var activityId: String
    var inbox: String
    var host: String
    /// The local actor whose key signs it (a user id, or `InstanceActor.id`).
    var signer: String
    var body: String
    /// Attempts made, this one included.
    var attempts: Int
}

/// The deliveries table: activities enqueued inside the transaction that decided them (one
/// row per distinct inbox, a shared inbox once for all its followers), claimed by the workers
/// of every instance with `FOR UPDATE SKIP LOCKED`, retried on Mastodon's schedule, deleted
/// once delivered, kept as `dead` once given up.
///
/// The activities of one object (a post's Create, Updates and Delete; an actor's Updates; the
/// Accepts of one follower's follows of one actor) reach an inbox one at a time, in the order
/// they were queued: sent together, an Update could arrive before its Create, or a Create
/// after its Delete. A newer activity supersedes the older ones it makes pointless (an Update
/// the older Updates, each carrying the whole object; a Delete the Creates and Updates; an
/// Accept the older Accepts of the pair, whose follows the newest replaced): those waiting are
/// dropped, and one being sent goes out or fails, and is not tried again.
struct DeliveryQueue: Sendable {
    /// Signalled after a commit that enqueued something: the worker of this process wakes.
    static let channel = "federation_deliveries"

    let database: Database
    let clock: @Sendable () -> Date
    /// How long a claimed row is left to its worker before another may take it again
    /// (longer than a delivery's timeout).
    var lease: TimeInterval = 60
    /// How long a host may fail without answering once before it is taken for gone (`failed`).
    var hostGoneAfter: TimeInterval = 7 * 86400

    /// An inbox URL's authority, the unit of pausing and of the wait for Accepts (written once,
    /// for both enqueues), without its scheme's default port: `host:443` is `host`.
    private static let host = """
        regexp_replace(lower(substring(inbox from '^[a-zA-Z][a-zA-Z0-9+.-]*://([^/?#]+)')),
            CASE WHEN inbox ~* '^https:' THEN ':443$' ELSE ':80$' END, '')
        """

    /// Enqueues `activity` to every distinct inbox of `userId`'s followers (their shared
    /// inbox where they have one), signed by `userId`.
    static func toFollowers(of userId: String, _ activity: JSONValue, in connection: DatabaseConnection) async throws {
        guard let queued = try await prepareToQueue(activity, in: connection) else { return }
        let added = try await connection.execute(
            """
            INSERT INTO deliveries (activity_id, object_id, inbox, host, signer, body, next_attempt_at)
            SELECT \(queued.id), \(queued.objectId), inbox, \(unescaped: Self.host), \(userId), \(queued.body), now()
            FROM (SELECT DISTINCT coalesce(shared_inbox, inbox) AS inbox FROM followers WHERE actor_id = \(userId)) AS targets
            ON CONFLICT (activity_id, inbox) DO NOTHING
            """)
        if added > 0 { connection.signalAfterCommit(channel) }
    }

    /// Enqueues `activity` to one inbox, signed by `signer`.
    static func to(_ inbox: String, _ activity: JSONValue, signer: String, in connection: DatabaseConnection) async throws {
        guard let queued = try await prepareToQueue(activity, in: connection) else { return }
        try await connection.execute(
            """
            INSERT INTO deliveries (activity_id, object_id, inbox, host, signer, body, next_attempt_at)
            SELECT \(queued.id), \(queued.objectId), inbox, \(unescaped: Self.host), \(signer), \(queued.body), now()
            FROM (SELECT \(inbox)::text AS inbox) AS target
            ON CONFLICT (activity_id, inbox) DO NOTHING
            """)
        connection.signalAfterCommit(channel)
    }

    /// The id of `activity`, of its object (whose activities are delivered in order) and its
    /// body, once the older deliveries it supersedes are gone; nil for an activity without id.
    private static func prepareToQueue(
        _ activity: JSONValue, in connection: DatabaseConnection
    ) async throws -> (id: String, objectId: String?, body: String)? {
        guard let id = activity["id"]?.string else { return nil }
        let type = activity["type"]?.string
        var objectId = activity["object"]?["id"]?.string ?? activity["object"]?.string
        // An Accept's object is one Follow; a follower sending Follow after Follow (each one
        // with a new id) queued an Accept apiece, as many as it liked. They are one follower's
        // follows of one actor, and the newest Accept is the one that counts.
        if type == "Accept", let follower = activity["object"]?["actor"]?.string, let followed = activity["object"]?["object"]?.string {
            objectId = "follows of \(followed) by \(follower)"
        }
        let body = String(decoding: activity.bytes, as: UTF8.self)
        let superseded: String? =
            switch type {
            case "Update": "#update-[0-9]+$"
            case "Delete": "#(create|update)-[0-9]+$"
            case "Accept": "#accepts/"
            default: nil
            }
        guard let objectId, let superseded else { return (id, objectId, body) }
        // Marked first, which locks them: a worker recording one's outcome meanwhile waits for
        // this transaction, then sees the mark. Those not being sent go now, the others when
        // they fail (`failed`).
        try await connection.execute(
            """
            UPDATE deliveries SET superseded = true
            WHERE object_id = \(objectId) AND activity_id ~ \(superseded) AND activity_id <> \(id) AND NOT dead AND NOT superseded
            """)
        try await connection.execute("DELETE FROM deliveries WHERE object_id = \(objectId) AND superseded AND NOT sending AND NOT dead")
        return (id, objectId, body)
    }

    /// Takes up to `limit` due deliveries of hosts that are not paused, oldest due first, for
    /// this worker alone: rows another instance holds are skipped, and the taken ones are
    /// leased (due again only after `lease`). A delivery waits while an earlier one of its
    /// object to its inbox is pending, and a Create of an actor's post while an earlier Accept
    /// of that actor to its host is (Mastodon drops a post from an actor its users do not follow
    /// yet: a post published as someone followed was lost to them); a superseded one is not
    /// sent again, and holds back those behind it only while its lease runs.
    func claim(limit: Int) async throws -> [Delivery] {
        let now = clock()
        return try await database.query(
            """
            UPDATE deliveries d SET next_attempt_at = \(now.addingTimeInterval(lease)), attempts = d.attempts + 1, sending = true
            FROM (
                SELECT id FROM deliveries q
                WHERE NOT q.dead AND q.next_attempt_at <= \(now)
                  AND NOT EXISTS (SELECT 1 FROM inbox_hosts h WHERE h.host = q.host AND h.paused_until > \(now))
                  AND NOT q.superseded
                  AND NOT EXISTS (
                      SELECT 1 FROM deliveries e
                      WHERE e.object_id = q.object_id AND e.inbox = q.inbox AND e.id < q.id AND NOT e.dead
                        AND NOT (e.superseded AND e.next_attempt_at <= \(now)))
                  AND (q.activity_id NOT LIKE '%#create-%' OR NOT EXISTS (
                      SELECT 1 FROM deliveries a
                      WHERE a.host = q.host AND a.signer = q.signer AND a.id < q.id AND a.activity_id LIKE '%#accepts/%' AND NOT a.dead
                        AND NOT (a.superseded AND a.next_attempt_at <= \(now))))
                ORDER BY q.next_attempt_at LIMIT \(limit) FOR UPDATE SKIP LOCKED
            ) AS due
            WHERE d.id = due.id
            RETURNING d.id, d.activity_id, d.inbox, d.host, d.signer, d.body, d.attempts
            """
        ).map { row in
            Delivery(
                id: try row.decode("id"), activityId: try row.decode("activity_id"), inbox: try row.decode("inbox"),
                host: try row.decode("host"), signer: try row.decode("signer"), body: try row.decode("body"),
                attempts: try row.decode("attempts"))
        }
    }

    /// Forgets given-up deliveries, and the ids of inbound activities, older than `date`,
    /// superseded deliveries whose worker never said how they went (their lease ended), hosts
    /// that last failed before `date` and are not paused, and the remote actors fetched before
    /// `date` that follow no one here (a key is fetched again when it signs something).
    func purge(before date: Date) async throws {
        try await database.execute("DELETE FROM deliveries WHERE dead AND created_at < \(date)")
        try await database.execute("DELETE FROM deliveries WHERE superseded AND NOT dead AND next_attempt_at <= \(clock())")
        try await database.execute("DELETE FROM inbound_activities WHERE received_at < \(date)")
        try await database.execute(
            "DELETE FROM inbox_hosts WHERE failed_at < \(date) AND (paused_until IS NULL OR paused_until <= \(clock()))")
        try await database.execute(
            """
            DELETE FROM remote_actors r
            WHERE fetched_at < \(date) AND NOT EXISTS (SELECT 1 FROM followers f WHERE f.follower_id = r.id)
            """)
    }

    /// Delivered: the row goes, and so does its host's run of failures. Here and in `failed`, a
    /// row claimed again since (this attempt outlived its lease) is the new attempt's to record.
    func delivered(_ delivery: Delivery) async throws {
        try await database.retryingTransaction { connection in
            try await connection.execute("DELETE FROM deliveries WHERE id = \(delivery.id) AND attempts = \(delivery.attempts)")
            let ended = try await connection.query("DELETE FROM inbox_hosts WHERE host = \(delivery.host) RETURNING consecutive_failures")
            if try ended.first?.decode("consecutive_failures", as: Int.self) ?? 0 > 0 {
                try await hurryAccepts(to: delivery.host, in: connection)
            }
        }
    }

    /// The Accepts that failed while their host was down are due now that it answers: the
    /// Creates of their actor's posts to that host wait for them (`claim`), and a retry hours
    /// away held them that long after the host was back. (Only those: an Accept the host
    /// refused would be retried at once whenever it answered something.)
    private func hurryAccepts(to host: String, in connection: DatabaseConnection) async throws {
        let now = clock()
        try await connection.execute(
            """
            UPDATE deliveries SET next_attempt_at = \(now)
            WHERE host = \(host) AND NOT dead AND activity_id LIKE '%#accepts/%' AND NOT sending AND next_attempt_at > \(now)
              AND (last_status IS NULL OR last_status >= 500 OR last_status = 429)
            """)
    }

    /// Not attempted after all (our resolver had no thread for its name): the attempt is
    /// handed back, and the delivery is due again at `dueAt`, or dropped if it was superseded
    /// meanwhile. Nothing is held against its host. (Each busy round cost an attempt, and a
    /// delivery could be given up without a try.) Whether it comes back at `dueAt`: not when it
    /// was dropped, or is no longer this attempt's (its lease lapsed).
    @discardableResult
    func putBack(_ delivery: Delivery, dueAt: Date) async throws -> Bool {
        try await database.retryingTransaction { connection in
            // An UPDATE, which sees a superseding transaction's mark (see `failed`).
            let superseded = try await connection.query(
                """
                UPDATE deliveries SET attempts = attempts - 1, sending = false, next_attempt_at = \(dueAt)
                WHERE id = \(delivery.id) AND attempts = \(delivery.attempts)
                RETURNING superseded
                """
            ).first?.decode("superseded", as: Bool.self)
            if superseded == true { try await connection.execute("DELETE FROM deliveries WHERE id = \(delivery.id)") }
            return superseded == false
        }
    }

    /// What recording a failed delivery made of its row.
    enum FailureRecord: Equatable {
        /// Tried again at its `retryAt`.
        case retrying
        /// Given up: kept, dead, for the retention.
        case givenUp
        /// Superseded while it was being sent, and dropped.
        case dropped
        /// Not this attempt's any more (its lease lapsed and the row was claimed again, or it
        /// was purged): nothing recorded.
        case lapsed
    }

    /// Not delivered: tried again at `retryAt`, or given up (`retryAt` nil); dropped if it was
    /// superseded while being sent. A 410 from the inbox drops its followers. A host that has
    /// now failed `pauseAfter` times in a row is left alone until `pauseUntil`; only failures of
    /// the host count (no answer, 5xx, 429): a 4xx says it is up, and counting those let any
    /// actor whose inbox answers 404 pause the deliveries to every follower on its server.
    /// A host failing since `hostGoneAfter` without answering once is taken for gone: its
    /// deliveries are given up at their first failure until it answers one (each was tried for
    /// three days, and its followers' every post queued more). Any answer that is not the host's
    /// failure ends its run, as a delivery does (which also ends a pause).
    @discardableResult
    func failed(
        _ delivery: Delivery, status: Int?, error: String, retryAt: Date?, pauseAfter: Int, pauseUntil: Date
    ) async throws -> FailureRecord {
        try await database.retryingTransaction { connection in
            var retryAt = retryAt
            let hostFailed = status.map { $0 >= 500 || $0 == 429 } ?? true
            if hostFailed {
                // A row at 0 failures ended its run at an answer (or the previous release reset
                // it): a new run.
                let since = try await connection.query(
                    """
                    INSERT INTO inbox_hosts AS h (host, consecutive_failures, failed_at, failing_since)
                    VALUES (\(delivery.host), 1, \(clock()), \(clock()))
                    ON CONFLICT (host) DO UPDATE SET consecutive_failures = h.consecutive_failures + 1, failed_at = EXCLUDED.failed_at,
                        failing_since = CASE WHEN h.consecutive_failures = 0 THEN EXCLUDED.failing_since ELSE h.failing_since END,
                        paused_until = CASE WHEN h.consecutive_failures + 1 >= \(pauseAfter) THEN \(pauseUntil) ELSE h.paused_until END
                    RETURNING failing_since
                    """
                ).first?.decode("failing_since", as: Date.self)
                if let since, since < clock().addingTimeInterval(-hostGoneAfter) { retryAt = nil }
            } else {
                // It answered: its run of failures ends (its row is kept, and a pause other
                // failures began stays).
                let ended = try await connection.execute(
                    "UPDATE inbox_hosts SET consecutive_failures = 0 WHERE host = \(delivery.host) AND consecutive_failures > 0")
                if ended > 0 { try await hurryAccepts(to: delivery.host, in: connection) }
            }
            // An UPDATE, which waits for a transaction marking the row superseded and then
            // sees the mark (a DELETE of superseded rows alone would not see it, nor wait).
            let recorded = try await connection.query(
                """
                UPDATE deliveries SET last_status = \(status), last_error = \(error), sending = false,
                    dead = \(retryAt == nil), next_attempt_at = coalesce(\(retryAt), next_attempt_at)
                WHERE id = \(delivery.id) AND attempts = \(delivery.attempts)
                RETURNING superseded
                """)
            let record: FailureRecord
            switch try recorded.first?.decode("superseded", as: Bool.self) {
            case nil: record = .lapsed
            case true?:
                try await connection.execute("DELETE FROM deliveries WHERE id = \(delivery.id)")
                record = .dropped
            case false?: record = retryAt == nil ? .givenUp : .retrying
            }
            if status == 410 { try await FollowerRepository.dropGone(inbox: delivery.inbox, in: connection) }
            return record
        }
    }
}
