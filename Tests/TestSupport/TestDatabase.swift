import Foundation
import Logging
import PostlyPostgres

/// A database of its own for one test, on the PostgreSQL that `deploy/test.sh` started:
///
///     try await TestDatabase.with { database in ... }
///
/// Each gets a fresh, uniquely named database, dropped afterwards.
public struct TestDatabase: Sendable {
    public let name: String
    public let configuration: PostgresConfiguration
    public let database: Database

    /// The test PostgreSQL's maintenance database, from which test databases are created.
    public static func serverConfiguration(database: String = "postgres", poolSize: Int = 1) throws -> PostgresConfiguration {
        PostgresConfiguration(
            host: try TestEnvironment.postgresHost,
            port: try TestEnvironment.postgresPort,
            user: try TestEnvironment.postgresUser,
            database: database,
            poolSize: poolSize,
            applicationName: "postly-tests"
        )
    }

    /// Creates a fresh database and a pool of `poolSize` connections to it.
    public static func create(poolSize: Int = 4, logger: Logger = Logger(label: "test-database")) async throws -> TestDatabase {
        let name = "postly_test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        let server = Database(configuration: try serverConfiguration(), logger: logger)
        do {
            // The name is generated above from hex digits and underscores only.
            try await server.execute("CREATE DATABASE \(unescaped: name)")
        } catch {
            await server.close()
            throw error
        }
        await server.close()
        let configuration = try serverConfiguration(database: name, poolSize: poolSize)
        return TestDatabase(name: name, configuration: configuration, database: Database(configuration: configuration, logger: logger))
    }

    /// Closes the pool and drops the database (also with connections still open elsewhere).
    public func drop() async {
        await database.close()
        guard let configuration = try? Self.serverConfiguration() else { return }
        let server = Database(configuration: configuration, logger: Logger(label: "test-database"))
        _ = try? await server.execute("DROP DATABASE IF EXISTS \(unescaped: name) WITH (FORCE)")
        await server.close()
    }

    /// Runs `body` while the database is out of reach as behind a stopped server: its
    /// connections are ended and new ones refused, until `body` returns.
    public func whileDown<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        let server = Database(configuration: try Self.serverConfiguration(), logger: Logger(label: "test-database"))
        try await server.execute("ALTER DATABASE \(unescaped: name) WITH ALLOW_CONNECTIONS false")
        try await server.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = \(name)")
        let result: Result<T, any Error>
        do { result = .success(try await body()) } catch { result = .failure(error) }
        try await server.execute("ALTER DATABASE \(unescaped: name) WITH ALLOW_CONNECTIONS true")
        await server.close()
        return try result.get()
    }

    /// Runs `body` with a fresh database, dropped afterwards whether `body` threw or not.
    public static func with<T: Sendable>(
        poolSize: Int = 4, _ body: (Database) async throws -> T
    ) async throws -> T {
        let test = try await create(poolSize: poolSize)
        do {
            let value = try await body(test.database)
            await test.drop()
            return value
        } catch {
            await test.drop()
            throw error
        }
    }
}
