import PostlyPostgres

/// Remote followers of local actors.
struct FollowerRepository: Sendable {
    let database: Database

    func count(of userId: String) async throws -> Int {
        try await database.query("SELECT count(*) AS n FROM followers WHERE actor_id = \(userId)").first?.decode("n", as: Int.self) ?? 0
    }

    /// Adds `follower` to `userId`'s followers, or renews its follow (a second Follow of the
    /// same actor is the same follower; the one it replaces ended).
    static func add(_ follower: RemoteActor, of userId: String, followId: String, in connection: DatabaseConnection) async throws {
        try await connection.execute(
            """
            WITH replaced AS (
                SELECT follower_id, follow_id FROM followers WHERE actor_id = \(userId) AND follower_id = \(follower.id) AND follow_id <> \(followId)
            ), added AS (
                INSERT INTO followers (actor_id, follower_id, inbox, shared_inbox, follow_id)
                VALUES (\(userId), \(follower.id), \(follower.inbox), \(follower.sharedInbox), \(followId))
                ON CONFLICT (actor_id, follower_id) DO UPDATE
                SET inbox = EXCLUDED.inbox, shared_inbox = EXCLUDED.shared_inbox, follow_id = EXCLUDED.follow_id
            )
            \(unescaped: endedFollows(in: "replaced"))
            """)
    }

    /// Ends the follow `followId` of `followerId`; or, unless that Follow ended already (an Undo
    /// retried after the actor followed again leaves the new follow), its follow of `userId`:
    /// Misskey's Undo names a Follow of its own making, never the one it sent.
    static func remove(_ followerId: String, of userId: String?, followId: String?, in connection: DatabaseConnection) async throws {
        try await connection.execute(
            """
            WITH removed AS (
                DELETE FROM followers WHERE follower_id = \(followerId)
                  AND (follow_id = \(followId)
                       OR (actor_id = \(userId) AND NOT EXISTS (
                           SELECT FROM inbound_activities
                           WHERE md5(actor_id) = md5(\(followerId)) AND actor_id = \(followerId) AND activity_id = \(followId)
                             AND ended_follow)))
                RETURNING follower_id, follow_id
            )
            \(unescaped: endedFollows(in: "removed"))
            """)
    }

    /// Records the follows (`follower_id`, `follow_id`) of the statement's `table` as ended, from
    /// now: kept as long as any activity seen.
    private static func endedFollows(in table: StaticString) -> String {
        """
        INSERT INTO inbound_activities (actor_id, activity_id, ended_follow)
        SELECT DISTINCT follower_id, follow_id, true FROM \(table)
        ON CONFLICT ((md5(actor_id)), activity_id) DO UPDATE SET ended_follow = true, received_at = now()
        """
    }

    /// Forgets a remote actor that was deleted: its follows and its key.
    static func forget(_ remoteActorId: String, in connection: DatabaseConnection) async throws {
        try await connection.execute("DELETE FROM followers WHERE follower_id = \(remoteActorId)")
        try await connection.execute("DELETE FROM remote_actors WHERE id = \(remoteActorId)")
    }

    /// Drops the followers whose inbox answered 410 Gone.
    static func dropGone(inbox: String, in connection: DatabaseConnection) async throws {
        try await connection.execute("DELETE FROM followers WHERE inbox = \(inbox) OR shared_inbox = \(inbox)")
    }
}
