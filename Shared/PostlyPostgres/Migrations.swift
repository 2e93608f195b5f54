/// One versioned change of a service's schema.
public struct Migration: Sendable {
    public let version: Int
    public let name: String
    /// Run as one script; may hold several statements. It runs inside a transaction, so
    /// statements that refuse one (`CREATE INDEX CONCURRENTLY`) cannot be used.
    public let sql: String

    public init(version: Int, name: String, sql: String) {
        self.version = version
        self.name = name
        self.sql = sql
    }
}

/// A service's migrations, applied at start.
///
/// All pending migrations run in one transaction under a transaction-scoped advisory lock,
/// each recorded in `schema_migrations(version, name, applied_at)`: applying twice changes
/// nothing, and of two instances starting at once one applies and the other finds them done.
public struct Migrations: Sendable {
    public struct DuplicateVersion: Error, Equatable {
        public let version: Int
    }

    /// The advisory lock every Postly service takes around its migrations (its own database each).
    static let advisoryLockKey = 0x706F_7374_6C79  // "postly"

    public let migrations: [Migration]

    public init(_ migrations: [Migration]) {
        self.migrations = migrations.sorted { $0.version < $1.version }
    }

    /// Applies the pending migrations and returns them (none when all were applied before).
    @discardableResult
    public func apply(to database: Database) async throws -> [Migration] {
        for (earlier, later) in zip(migrations, migrations.dropFirst()) where earlier.version == later.version {
            throw DuplicateVersion(version: later.version)
        }
        let applied = try await database.transaction { connection in
            try await connection.execute("SELECT pg_advisory_xact_lock(\(Self.advisoryLockKey))")
            try await connection.execute("""
                CREATE TABLE IF NOT EXISTS schema_migrations (
                    version bigint PRIMARY KEY,
                    name text NOT NULL,
                    applied_at timestamptz NOT NULL DEFAULT now()
                )
                """)
            let done = Set(try await connection.query("SELECT version FROM schema_migrations").map {
                try $0.decode("version", as: Int.self)
            })
            let pending = migrations.filter { !done.contains($0.version) }
            for migration in pending {
                try await connection.executeScript(unescaped: migration.sql)
                try await connection.execute(
                    "INSERT INTO schema_migrations (version, name) VALUES (\(migration.version), \(migration.name))")
            }
            return pending
        }
        for migration in applied {
            database.logger.info("applied migration", metadata: ["version": "\(migration.version)", "name": "\(migration.name)"])
        }
        return applied
    }
}
