import PostlyPostgres

/// The `changes` table: every change to what search shows, numbered in commit order, which each
/// instance follows to keep its index in memory (`IndexFollower`). A writer takes one advisory
/// lock before its first change and holds it until it commits, so positions are handed out in
/// the order their transactions commit: an instance that has read up to a position has seen
/// every change before it, whichever instance's consumer wrote it.
enum ChangeLog {
    /// Notified when a transaction with changes commits, so every instance looks at once.
    /// (`NOTIFY` makes notifying transactions commit one at a time; these already do.)
    static let channel = "search_changes"
    private static let lockKey: Int = 0x7365_6172  // "sear"
    /// How long a change stays in the log: an instance that could not read it for half as
    /// long loads everything again.
    static let kept = Duration.seconds(3600)

    /// Takes the writers' lock for this transaction (again: it is held until the commit), and
    /// notifies `channel` when it commits (once, however many times this runs). One lock per
    /// `changes` table, named by its oid, so a reindex filling its own tables does not wait for
    /// the live consumer, and its writes into them after they became the live ones take the live
    /// consumer's lock. (Keyed on the schema, a replay batch at the switch wrote into the live
    /// log under the rebuild's lock, and a position could commit behind a later one, unread.)
    static func lock(in connection: DatabaseConnection) async throws {
        try await connection.execute(
            "SELECT pg_advisory_xact_lock(\(lockKey)::int, hashtext(to_regclass('changes')::oid::text)), pg_notify(\(channel), '')")
    }

    /// Post `id` changed: its row, likes or comments.
    static func record(post id: String, in connection: DatabaseConnection) async throws {
        try await connection.execute("INSERT INTO changes (post_id) VALUES (\(id))")
    }

    /// The author `id` changed: a name or picture.
    static func record(author id: String, in connection: DatabaseConnection) async throws {
        try await connection.execute("INSERT INTO changes (author_id) VALUES (\(id))")
    }

    /// Forgets the changes older than `kept` (any instance may; doing it twice is harmless).
    static func prune(_ database: Database) async throws {
        try await database.execute("DELETE FROM changes WHERE at < now() - make_interval(secs => \(Int(kept.components.seconds)))")
    }
}
