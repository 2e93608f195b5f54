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

extension Database {
    /// Makes the COMMIT of every transaction that inserted into or updated `table` take a
    /// second (a deferred trigger), so that a test can act while the transaction is there.
    public func slowCommits(of table: String) async throws {
        try await withConnection { try await $0.executeScript(unescaped: """
            CREATE FUNCTION slow_commit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(1); RETURN NULL; END $$;
            CREATE CONSTRAINT TRIGGER slow_commit AFTER INSERT OR UPDATE ON \(table) DEFERRABLE INITIALLY DEFERRED
                FOR EACH ROW EXECUTE FUNCTION slow_commit();
            """) }
    }

    /// Waits until a backend of this database (not this caller's) runs COMMIT, then ends it,
    /// as a lost connection would; whether it did within `timeout`.
    public func endBackendCommitting(within timeout: Duration = .seconds(10)) async throws -> Bool {
        try await eventually(within: timeout) {
            try await !query(
                """
                SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                WHERE datname = current_database() AND query = 'COMMIT' AND pid <> pg_backend_pid()
                """
            ).isEmpty
        }
    }
}
