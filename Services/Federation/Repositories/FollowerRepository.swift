import PostlyPostgres

/// Remote followers of local actors.
struct FollowerRepository: Sendable {
    let database: Database

    func count(of userId: String) async throws -> Int {
        try await database.query("SELECT count(*) AS n FROM followers WHERE actor_id = \(userId)").first?.decode("n", as: Int.self) ?? 0
    }

    /// Adds `follower` to `userId`'s followers, or renews its follow (a second Follow of the
    /// same actor is the same follower).
    static func add(_ follower: RemoteActor, of userId: String, followId: String, in connection: DatabaseConnection) async throws {
        try await connection.execute(
            """
            INSERT INTO followers (actor_id, follower_id, inbox, shared_inbox, follow_id)
            VALUES (\(userId), \(follower.id), \(follower.inbox), \(follower.sharedInbox), \(followId))
            ON CONFLICT (actor_id, follower_id) DO UPDATE
            SET inbox = EXCLUDED.inbox, shared_inbox = EXCLUDED.shared_inbox, follow_id = EXCLUDED.follow_id
            """)
    }

    /// Ends `followerId`'s follow of `userId`, or of whichever actor the follow `followId` was of.
    static func remove(_ followerId: String, of userId: String?, followId: String?, in connection: DatabaseConnection) async throws {
        try await connection.execute(
            """
            DELETE FROM followers WHERE follower_id = \(followerId)
              AND (actor_id = \(userId) OR follow_id = \(followId))
            """)
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
