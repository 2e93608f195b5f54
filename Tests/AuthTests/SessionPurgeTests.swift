import AuthService
import Foundation
import PostlyPostgres
import Testing

/// The hourly purge deletes what no request can use any more, and nothing a client still
/// holds: every refresh and every session kept a row, forever.
@Suite struct SessionPurgeTests {
    @Test func thePurgeKeepsWhatClientsHoldAndDeletesTheRest() async throws {
        try await AuthTestHarness.run { auth async throws in
            let live = try await auth.registered()
            let rotated = try await auth.refresh(live.refreshToken).session()
            // Spent an hour ago: past the grace, its kept answer can go; the row stays.
            try await auth.database.execute("UPDATE refresh_tokens SET spent_at = now() - interval '1 hour' WHERE spent_at IS NOT NULL")
            let expired = try await auth.registered()
            try await auth.database.execute(
                "UPDATE sessions SET access_expires_at = now() - interval '1 second' WHERE user_id = \(expired.user.userId)")
            try await auth.database.execute(
                """
                UPDATE refresh_tokens SET expires_at = now() - interval '1 second'
                WHERE session_id IN (SELECT id FROM sessions WHERE user_id = \(expired.user.userId))
                """)
            let loggedOut = try await auth.registered()
            #expect(try await auth.post("/api/auth/logout", json: nil, token: loggedOut.accessToken).status == .ok)

            try await PostgresAccountRepository(database: auth.database).purgeExpiredSessions(replayGrace: .seconds(10))

            func count(_ sql: SQL) async throws -> Int64 { try await auth.database.query(sql)[0].decode(0, as: Int64.self) }
            func tokens(of user: AuthSession) async throws -> Int64 {
                try await count("SELECT count(*) FROM refresh_tokens r JOIN sessions s ON s.id = r.session_id WHERE s.user_id = \(user.user.userId)")
            }
            func sessions(of user: AuthSession) async throws -> Int64 {
                try await count("SELECT count(*) FROM sessions WHERE user_id = \(user.user.userId)")
            }
            #expect(try await tokens(of: live) == 2, "the spent token stays until the session's next refresh")
            #expect(try await count("SELECT count(*) FROM refresh_tokens WHERE answer IS NOT NULL") == 0)
            #expect(try await sessions(of: expired) == 0)
            #expect(try await tokens(of: expired) == 0)
            #expect(try await sessions(of: loggedOut) == 1, "its access token may still be live")
            #expect(try await tokens(of: loggedOut) == 0)
            #expect(try await auth.refresh(rotated.refreshToken).status == .ok)
        }
    }
}
