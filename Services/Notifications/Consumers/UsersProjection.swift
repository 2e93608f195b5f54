import PostlyModels
import PostlyPostgres

/// Users' current names and pictures, from `user.registered`/`user.updated`; notifications
/// show their actor from here when known, else as the event named them.
enum UsersProjection {
    static func apply(_ user: UserSnapshot, in connection: DatabaseConnection) async throws {
        try await connection.execute(
            """
            INSERT INTO users (user_id, name, profile_picture) VALUES (\(user.userId), \(user.name), \(user.profilePicture))
            ON CONFLICT (user_id) DO UPDATE SET name = EXCLUDED.name, profile_picture = EXCLUDED.profile_picture
            """)
    }
}
