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

    static func applyPostAuthor(_ author: Author, in connection: DatabaseConnection) async throws {
        let changed = try await connection.execute(
            """
            INSERT INTO authors (user_id, name, profile_picture) VALUES (\(author.userId), \(author.name), \(author.profilePicture))
            ON CONFLICT (user_id) DO UPDATE SET name = EXCLUDED.name, profile_picture = EXCLUDED.profile_picture
            WHERE authors.sequence = 0
              AND (authors.name, authors.profile_picture) IS DISTINCT FROM (EXCLUDED.name, EXCLUDED.profile_picture)
            """)
        if changed > 0 { try await recordChange(of: author.userId, name: author.name, in: connection) }
    }

    private static func recordChange(of userId: String, name: String, in connection: DatabaseConnection) async throws {
        // Taken already, except after a post's write that stored nothing.
        try await ChangeLog.lock(in: connection)
        try await SearchIndexer.addToLexicon(name, in: connection)
        try await ChangeLog.record(author: userId, in: connection)
    }
}
