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

    @Test func configuredServerSettingsHoldOnEveryConnection() async throws {
        let test = try await TestDatabase.create()
        var configuration = test.configuration
        configuration.settings["plan_cache_mode"] = "force_generic_plan"
        configuration.poolSize = 3
        let database = Database(configuration: configuration, logger: Logger(label: "settings"))
        let modes = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<3 {
                group.addTask {
                    try await database.query("SELECT current_setting('plan_cache_mode') AS mode, pg_sleep(0.05)").first!
                        .decode("mode", as: String.self)
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let timeZone = try await database.query("SELECT current_setting('TimeZone') AS zone").first!.decode("zone", as: String.self)
        await database.close()
        await test.drop()
        #expect(modes == Array(repeating: "force_generic_plan", count: 3))
        #expect(timeZone == "UTC")
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
}
