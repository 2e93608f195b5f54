import PostlyPostgres

/// The streams open on every instance, so that one user's streams are counted together: one
/// more than allowed ends the user's oldest, on whichever instance it is open (announced on
/// `closingChannel`, which every instance's hub hears). Each instance refreshes its rows at
/// its heartbeat; a row left unrefreshed is of an instance that stopped without removing it,
/// and no longer counts.
struct OpenStreams: Sendable {
    static let closingChannel = "postly_stream_closes"

    static let migration = Migration(
        version: 5, name: "open streams",
        sql: """
            -- Every instance's open streams, so a user's sixth ends their oldest wherever it is.
            CREATE TABLE open_streams (
                id text PRIMARY KEY,
                user_id text NOT NULL,
                opened_at timestamptz NOT NULL DEFAULT clock_timestamp(),
                seen_at timestamptz NOT NULL DEFAULT clock_timestamp()
            );
            CREATE INDEX open_streams_by_user ON open_streams (user_id, opened_at);
            CREATE INDEX open_streams_by_seen ON open_streams (seen_at);
            """)

    let database: Database
    let streamsPerUser: Int
    /// Three heartbeats: a row older than that is of an instance that stopped.
    let staleAfter: Duration

    /// Counts a stream opened now and ends the user's streams beyond the limit, oldest first
    /// (one user's openings take turns, on every instance).
    func open(id: String, userId: String) async throws {
        let staleSeconds = Double(staleAfter.components.seconds) + Double(staleAfter.components.attoseconds) / 1e18
        try await database.retryingTransaction { connection in
            try await connection.execute("SELECT pg_advisory_xact_lock(hashtextextended(\("open-streams:" + userId), 0))")
            try await connection.execute(
                "DELETE FROM open_streams WHERE seen_at < clock_timestamp() - \(staleSeconds) * interval '1 second'")
            try await connection.execute("INSERT INTO open_streams (id, user_id) VALUES (\(id), \(userId))")
            let surplus = try await connection.query(
                """
                DELETE FROM open_streams WHERE id IN (
                    SELECT id FROM open_streams WHERE user_id = \(userId) ORDER BY opened_at DESC OFFSET \(streamsPerUser))
                RETURNING id
                """)
            for row in surplus {
                try await connection.execute("SELECT pg_notify(\(Self.closingChannel), \(try row.decode("id", as: String.self)))")
            }
        }
    }

    func close(id: String) async throws {
        try await database.execute("DELETE FROM open_streams WHERE id = \(id)")
    }

    /// Marks this instance's streams as still open; returns those whose rows are gone.
    func refresh(ids: [String]) async throws -> Set<String> {
        guard !ids.isEmpty else { return [] }
        let seen = try await database.query("UPDATE open_streams SET seen_at = clock_timestamp() WHERE id = ANY(\(ids)) RETURNING id")
        return Set(ids).subtracting(try seen.map { try $0.decode("id", as: String.self) })
    }
}
