import PostlyPostgres

extension Database {
    /// Waits until a backend of this database waits for a lock while running a statement that
    /// contains `text`, then ends it, as a lost connection would; how many it ended (none when
    /// none waited within `timeout`).
    public func endBackend(waitingForALockIn text: String, within timeout: Duration = .seconds(20)) async throws -> Int {
        func waiting(_ select: String) -> SQL {
            """
            SELECT \(unescaped: select) FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock' AND position(\(text) in query) > 0
            """
        }
        guard try await eventually(within: timeout, { try await !query(waiting("pid")).isEmpty }) else { return 0 }
        return try await query(waiting("pg_terminate_backend(pid) AS ended")).filter { try $0.decode("ended", as: Bool.self) }.count
    }
}
