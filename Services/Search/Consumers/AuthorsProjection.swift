import PostlyModels
import PostlyPostgres

/// Authors' names and pictures, searched and shown with their posts. A user event is the
/// authority (its sequence is kept); a post event's author only fills in a user no user
/// event told of yet.
enum AuthorsProjection {
    static func apply(_ user: UserSnapshot, sequence: Int64, in connection: DatabaseConnection) async throws {
        let changed = try await connection.execute(
            """
            INSERT INTO authors (user_id, name, profile_picture, sequence)
            VALUES (\(user.userId), \(user.name), \(user.profilePicture), \(sequence))
            ON CONFLICT (user_id) DO UPDATE
            SET name = EXCLUDED.name, profile_picture = EXCLUDED.profile_picture, sequence = EXCLUDED.sequence
            WHERE authors.sequence < EXCLUDED.sequence
            """)
        if changed > 0 { try await recordChange(of: user.userId, name: user.name, in: connection) }
    }

    /// The authors of posts just stored (the last of each), in one statement.
    static func applyPostAuthors(_ authors: [Author], in connection: DatabaseConnection) async throws {
        var last: [String: Author] = [:]
        for author in authors { last[author.userId] = author }
        var rows = JSONWriter(capacity: last.count * 128)
        rows.array(last.values.sorted { $0.userId < $1.userId })
        let changed = try await connection.query(
            """
            INSERT INTO authors (user_id, name, profile_picture)
            SELECT a."userId", a.name, a."profilePicture"
            FROM jsonb_to_recordset(\(String(decoding: rows.bytes, as: UTF8.self))::jsonb) AS a("userId" text, name text, "profilePicture" text)
            ON CONFLICT (user_id) DO UPDATE SET name = EXCLUDED.name, profile_picture = EXCLUDED.profile_picture
            WHERE authors.sequence = 0
              AND (authors.name, authors.profile_picture) IS DISTINCT FROM (EXCLUDED.name, EXCLUDED.profile_picture)
            RETURNING user_id, name
            """)
        for row in changed { try await recordChange(of: row.decode("user_id"), name: row.decode("name"), in: connection) }
    }

    private static func recordChange(of userId: String, name: String, in connection: DatabaseConnection) async throws {
        // Taken already, except after a post's write that stored nothing.
        try await ChangeLog.lock(in: connection)
        try await SearchIndexer.addToLexicon(name, in: connection)
        try await ChangeLog.record(author: userId, in: connection)
    }
}
