import Foundation
import Logging
import PostlyModels
import PostlyPostgres

/// The revoked sessions this service has heard of, kept in its own database: the projection
/// of `session.revoked` that the kit keeps for every service, so a revocation outlives the
/// process and the broker (tansu forgets everything on a restart). The kit loads it into the
/// deny-list before the service answers, and `SessionRevocationListener` adds to it. A row is
/// pruned once every access token of its session has expired.
public struct RevokedSessions: Sendable {
    /// The kit's migrations take versions from here up, far above any service's own.
    public static let firstKitVersion = 1_000_000

    public static let migration = Migration(
        version: firstKitVersion + 1, name: "kit: revoked sessions",
        sql: """
            CREATE TABLE revoked_sessions (
                session_id text PRIMARY KEY,
                -- When the session's last access token expires; the row is pruned after it.
                expires_at timestamptz NOT NULL
            );
            CREATE INDEX revoked_sessions_expiry ON revoked_sessions (expires_at);
            """)

    let database: Database

    public init(database: Database) {
        self.database = database
    }

    /// Stores the revocation (a later expiry wins) and prunes what has expired.
    public func record(_ revocation: SessionRevocation) async throws {
        try await database.transaction { connection in
            try await connection.execute(
                """
                INSERT INTO revoked_sessions (session_id, expires_at) VALUES (\(revocation.sessionId), \(revocation.expiresAt))
                ON CONFLICT (session_id) DO UPDATE SET expires_at = GREATEST(revoked_sessions.expires_at, EXCLUDED.expires_at)
                """)
            try await connection.execute("DELETE FROM revoked_sessions WHERE expires_at < now()")
        }
    }

    /// Puts every unexpired revocation on the deny-list; returns how many.
    @discardableResult
    public func load(into denyList: SessionDenyList) async throws -> Int {
        try await database.execute("DELETE FROM revoked_sessions WHERE expires_at < now()")
        let rows = try await database.query("SELECT session_id, expires_at FROM revoked_sessions")
        for row in rows {
            denyList.revoke(sessionId: try row.decode("session_id"), until: try row.decode("expires_at"))
        }
        return rows.count
    }
}
