internal import Crypto

/// One versioned change of a service's schema. Once released its text never changes: a
/// database that applied it would not apply the edit, so a change is a new migration.
/// `Migrations.apply` records each text's `checksum` and refuses to start when it changed.
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

    /// SHA-256 of `sql`'s UTF-8 bytes in lowercase hex, as `schema_migrations.checksum` keeps it.
    public var checksum: String {
        let hexDigits = Array("0123456789abcdef".utf8)
        var hex: [UInt8] = []
        for byte in SHA256.hash(data: Array(sql.utf8)) {
            hex.append(hexDigits[Int(byte >> 4)])
            hex.append(hexDigits[Int(byte & 0x0F)])
        }
        return String(decoding: hex, as: UTF8.self)
    }
}

/// A service's migrations, applied at start.
///
/// All pending migrations run in one transaction under a transaction-scoped advisory lock,
/// each recorded in `schema_migrations(version, name, applied_at, checksum)`: applying twice
/// changes nothing, and of two instances starting at once one applies and the other finds
/// them done. A migration applied before checksums were kept gets its text's checksum on the
/// next start.
public struct Migrations: Sendable {
    public struct DuplicateVersion: Error, Equatable {
        public let version: Int
    }

    /// An applied migration whose text is no longer the text that was applied.
    public struct EditedMigration: Error, Equatable, CustomStringConvertible {
        public let version: Int
        public let name: String
        /// The checksum recorded when it was applied, and the one of its text now.
        public let applied: String
        public let current: String

        public init(version: Int, name: String, applied: String, current: String) {
            self.version = version
            self.name = name
            self.applied = applied
            self.current = current
        }

        public var description: String {
            "migration \(version) (\(name)) was edited after it was applied (checksum \(applied), now \(current)): "
                + "restore its text and add a new migration instead"
        }
    }

    /// The advisory lock every Postly service takes around its migrations (its own database each).
    static let advisoryLockKey = 0x706F_7374_6C79  // "postly"

    public let migrations: [Migration]

    public init(_ migrations: [Migration]) {
        self.migrations = migrations.sorted { $0.version < $1.version }
    }

    /// Applies the pending migrations and returns them (none when all were applied before).
    /// Throws `EditedMigration`, applying nothing, when an applied migration's text changed.
    @discardableResult
    public func apply(to database: Database) async throws -> [Migration] {
        for (earlier, later) in zip(migrations, migrations.dropFirst()) where earlier.version == later.version {
            throw DuplicateVersion(version: later.version)
        }
        let (applied, checksummed) = try await database.transaction { connection in
            // A migration may rewrite a large table, and waits for another instance's.
            try await connection.removeTimeouts()
            try await connection.execute("SELECT pg_advisory_xact_lock(\(Self.advisoryLockKey))")
            try await connection.execute("""
                CREATE TABLE IF NOT EXISTS schema_migrations (
                    version bigint PRIMARY KEY,
                    name text NOT NULL,
                    applied_at timestamptz NOT NULL DEFAULT now(),
                    checksum text
                )
                """)
            // A table from before checksums were kept; an older binary still inserts without one.
            try await connection.execute("ALTER TABLE schema_migrations ADD COLUMN IF NOT EXISTS checksum text")
            var recorded: [Int: String?] = [:]
            for row in try await connection.query("SELECT version, checksum FROM schema_migrations") {
                recorded[try row.decode("version", as: Int.self)] = try row.decode("checksum", as: String?.self)
            }
            var checksummed: [Migration] = []
            for migration in migrations {
                guard let checksum = recorded[migration.version] else { continue }
                guard let checksum else {
                    try await connection.execute(
                        "UPDATE schema_migrations SET checksum = \(migration.checksum) WHERE version = \(migration.version)")
                    checksummed.append(migration)
                    continue
                }
                if checksum != migration.checksum {
                    throw EditedMigration(version: migration.version, name: migration.name, applied: checksum, current: migration.checksum)
                }
            }
            let pending = migrations.filter { recorded[$0.version] == nil }
            for migration in pending {
                try await connection.executeScript(unescaped: migration.sql)
                try await connection.execute(
                    """
                    INSERT INTO schema_migrations (version, name, checksum)
                    VALUES (\(migration.version), \(migration.name), \(migration.checksum))
                    """)
            }
            return (pending, checksummed)
        }
        for migration in checksummed {
            database.logger.info("recorded the checksum of a migration applied before", metadata: ["version": "\(migration.version)", "name": "\(migration.name)"])
        }
        for migration in applied {
            database.logger.info("applied migration", metadata: ["version": "\(migration.version)", "name": "\(migration.name)"])
        }
        return applied
    }
}
