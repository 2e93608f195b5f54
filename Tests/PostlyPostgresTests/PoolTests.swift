import Logging
import PostlyPostgres
import Synchronization
import Testing
import TestSupport

@Suite("Connection pool", .timeLimit(.minutes(1)))
struct PoolTests {
    @Test func fiftyConcurrentQueriesOnAPoolOfFourAllSucceed() async throws {
        try await TestDatabase.with(poolSize: 4) { database in
            let results = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<50 {
                    group.addTask {
                        try await database.query("SELECT \(index) AS n, pg_sleep(0.02)").first!.decode("n", as: Int.self)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(results.sorted() == Array(0..<50))
            let sessions = try await database.query(
                "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'postly-tests'")
            #expect(try sessions.first!.decode("n", as: Int.self) <= 4)
        }
    }

    @Test func aWaitingCallerCanBeCancelled() async throws {
        try await TestDatabase.with(poolSize: 1) { database in
            try await database.withConnection { _ in
                let waiting = Task { try await database.ping() }
                try await Task.sleep(for: .milliseconds(50))
                waiting.cancel()
                await #expect(throws: CancellationError.self) { try await waiting.value }
            }
            try await database.ping()
        }
    }

    @Test func aClosedPoolAnswersClosed() async throws {
        let test = try await TestDatabase.create(poolSize: 2)
        try await test.database.ping()
        await test.drop()
        await #expect(throws: DatabaseError.closed) { try await test.database.ping() }
    }

    @Test func configurationReadsTheEnvironmentWithLocalDefaults() {
        let defaults = PostgresConfiguration.fromEnvironment(environment: [:])
        #expect(defaults.host == "127.0.0.1")
        #expect(defaults.port == 5432)
        #expect(defaults.user == "postgres")
        #expect(defaults.password == nil)
        #expect(defaults.database == "postgres")
        #expect(defaults.poolSize == 10)
        let set = PostgresConfiguration.fromEnvironment(environment: [
            "POSTGRES_HOST": "db", "POSTGRES_PORT": "6543", "POSTGRES_USER": "posts", "POSTGRES_PASSWORD": "pw",
            "POSTGRES_DATABASE": "posts", "POSTGRES_POOL_SIZE": "3",
        ])
        #expect(set.host == "db" && set.port == 6543 && set.user == "posts" && set.password == "pw")
        #expect(set.database == "posts" && set.poolSize == 3)
        #expect(!set.description.contains("pw"))
    }
}
