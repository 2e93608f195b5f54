import PostlyModels
import PostlyPostgres

/// Local actors: every author the events told of, with the handle fixed at first sight.
struct ActorRepository: Sendable {
    let database: Database

    func actor(userId: String) async throws -> LocalActor? {
        try await database.query("SELECT user_id, handle, name, profile_picture FROM actors WHERE user_id = \(userId)").first.map(Self.actor)
    }

    func actor(handle: String) async throws -> LocalActor? {
        try await database.query("SELECT user_id, handle, name, profile_picture FROM actors WHERE handle = \(handle)").first.map(Self.actor)
    }

    func count() async throws -> Int {
        try await database.query("SELECT count(*) AS n FROM actors").first?.decode("n", as: Int.self) ?? 0
    }

    /// Stores `user` as told by a user event with `sequence` (the authority on names), or by a
    /// post event when `sequence` is nil (it only fills in an author no user event told of
    /// yet). A new actor gets a free handle made from the name: the name's base, else the base
    /// with the next suffix of its counter (`handle_suffixes`). Returns the actor when
    /// a user event changed an existing actor's name or picture (its followers are told).
    private static let handleSuffixes = SuffixCounter(table: "handle_suffixes")

    @discardableResult
    static func store(_ user: Author, sequence: Int64?, in connection: DatabaseConnection) async throws -> LocalActor? {
        let rows = try await connection.query(
            """
            UPDATE actors SET name = \(user.name), profile_picture = \(user.profilePicture), sequence = coalesce(\(sequence), sequence)
            WHERE user_id = \(user.userId)
              AND (\(sequence)::bigint > sequence OR (\(sequence)::bigint IS NULL AND sequence = 0))
              AND (name, profile_picture) IS DISTINCT FROM (\(user.name), \(user.profilePicture))
            RETURNING user_id, handle, name, profile_picture
            """)
        if let changed = rows.first { return sequence == nil ? nil : try actor(changed) }
        let base = Handle.base(from: user.name)
        var attempt = 1
        // Taken handles and a concurrent insert of the same user both end in DO NOTHING; after
        // the base, the suffix comes from the base's counter.
        while try await connection.execute(
            """
            INSERT INTO actors (user_id, handle, name, profile_picture, sequence)
            VALUES (\(user.userId), \(Handle.candidate(base, attempt: attempt)), \(user.name), \(user.profilePicture), \(sequence ?? 0))
            ON CONFLICT DO NOTHING
            """) == 0 {
            let exists = try await connection.query("SELECT 1 FROM actors WHERE user_id = \(user.userId)")
            if !exists.isEmpty { return nil }
            attempt = try await Self.handleSuffixes.next(of: base, in: connection)
        }
        return nil
    }

    static func actor(_ row: Row) throws -> LocalActor {
        LocalActor(
            userId: try row.decode("user_id"), handle: try row.decode("handle"), name: try row.decode("name"),
            profilePicture: try row.decode("profile_picture"))
    }
}
