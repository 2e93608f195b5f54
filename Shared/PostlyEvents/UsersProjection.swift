import PostlyModels
import PostlyPostgres

/// Users' names and pictures, as `user.registered` and `user.updated` on `postly.users` tell
/// them, in a table `users (user_id, name, profile_picture)` of a service's own database:
/// posts, comments and notifications keep it. Search keeps an `authors` table of its own
/// instead (its `AuthorsProjection`: names are searched there, and a post's author stands in
/// for a user no user event told of yet).
///
/// To adopt it, a service
/// 1. adds `UsersProjection.migration(version:)` to its migrations,
/// 2. consumes `.users` with its `EventConsumerRunner`, and calls `UsersProjection.apply`
///    from its `EventHandler` (it returns the user it stored, for a service that also copies
///    the name somewhere else, and nil for other events),
/// 3. reads names with `LEFT JOIN users u ON u.user_id = <author id>`, falling back to the
///    name the access token carried until the user's first event has arrived.
public enum UsersProjection {
    public static let topic = Topic.users

    /// Creates the table; a service that had its own `users` table of this shape keeps it.
    public static func migration(version: Int) -> Migration {
        Migration(
            version: version, name: "users projection",
            sql: """
                CREATE TABLE IF NOT EXISTS users (
                    user_id text PRIMARY KEY,
                    name text NOT NULL,
                    profile_picture text
                );
                """)
    }

    /// Stores the user of a `user.registered` or `user.updated` event and returns it; other
    /// events change nothing and return nil. Call it inside the runner's transaction, which
    /// has already dropped stale and repeated events.
    @discardableResult
    public static func apply(_ event: Event, in connection: DatabaseConnection) async throws -> UserSnapshot? {
        switch event.data {
        case .userRegistered(let user), .userUpdated(let user):
            try await connection.execute(
                """
                INSERT INTO users (user_id, name, profile_picture) VALUES (\(user.userId), \(user.name), \(user.profilePicture))
                ON CONFLICT (user_id) DO UPDATE SET name = EXCLUDED.name, profile_picture = EXCLUDED.profile_picture
                """)
            return user
        default:
            return nil
        }
    }

    /// The picture of a user, when a user event told it.
    public static func profilePicture(of userId: String, in connection: DatabaseConnection) async throws -> String? {
        try await connection.query("SELECT profile_picture FROM users WHERE user_id = \(userId)").first?
            .decode("profile_picture", as: String?.self)
    }
}
