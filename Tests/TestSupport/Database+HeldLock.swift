import PostlyPostgres

extension Database {
    /// Runs `body` while a transaction of this pool holds what `take` locked, as another
    /// request's would; then `finish` runs in that transaction, and it commits.
    public func whileLocked<T: Sendable>(
        by take: @escaping @Sendable (DatabaseConnection) async throws -> Void,
        _ body: () async throws -> T,
        thenCommitting finish: @escaping @Sendable (DatabaseConnection) async throws -> Void = { _ in }
    ) async throws -> T {
        let (releasing, release) = AsyncStream.makeStream(of: Void.self)
        let (held, hold) = AsyncStream.makeStream(of: Void.self)
        let holder = Task {
            // Ends the wait below when `take` throws, too.
            defer { hold.finish() }
            try await transaction { connection in
                try await take(connection)
                hold.yield()
                for await _ in releasing { break }
                try await finish(connection)
            }
        }
        for await _ in held { break }
        let result: Result<T, any Error>
        do { result = .success(try await body()) } catch { result = .failure(error) }
        release.finish()
        try await holder.value
        return try result.get()
    }

    /// Whether a statement on this database waits for a lock now.
    public func someoneWaitsForALock() async throws -> Bool {
        try await statementsWaitingForALock() > 0
    }

    /// How many statements on this database wait for a lock now.
    public func statementsWaitingForALock() async throws -> Int {
        try await query("SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'").count
    }
}
