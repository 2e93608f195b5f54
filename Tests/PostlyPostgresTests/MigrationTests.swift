import Logging
import PostlyPostgres
import Testing
import TestSupport

@Suite("Migrations")
struct MigrationTests {
    /// The second migration fails if it ever runs twice (the column exists then).
    static let migrations = Migrations([
        Migration(version: 1, name: "create posts", sql: "CREATE TABLE posts (id serial PRIMARY KEY, title text NOT NULL)"),
        Migration(version: 2, name: "add slug", sql: """
            ALTER TABLE posts ADD COLUMN slug text;
            CREATE UNIQUE INDEX posts_slug ON posts (slug);
            INSERT INTO posts (title, slug) VALUES ('hello', 'hello');
            """),
    ])

    @Test func applyingTwiceChangesNothing() async throws {
        try await TestDatabase.with { database in
            #expect(try await Self.migrations.apply(to: database).map(\.version) == [1, 2])
            #expect(try await Self.migrations.apply(to: database).isEmpty)
            let recorded = try await database.query("SELECT version, name, applied_at FROM schema_migrations ORDER BY version")
            #expect(try recorded.map { try $0.decode("version", as: Int.self) } == [1, 2])
            #expect(try recorded.map { try $0.decode("name", as: String.self) } == ["create posts", "add slug"])
            #expect(try await database.query("SELECT * FROM posts").count == 1)
        }
    }

    /// The services' statement timeout is for requests and events: a migration that rewrites a
    /// large table takes what it takes, where an ordinary statement is cancelled.
    @Test func aMigrationLongerThanTheStatementTimeoutApplies() async throws {
        let test = try await TestDatabase.create()
        var configuration = test.configuration
        configuration.settings["statement_timeout"] = "100"
        let database = Database(configuration: configuration, logger: Logger(label: "timeout"))
        let slow = Migrations([Migration(version: 1, name: "slow", sql: "CREATE TABLE t AS SELECT 1 AS n FROM pg_sleep(0.3)")])
        var applied: [Int] = []
        do {
            applied = try await slow.apply(to: database).map(\.version)
        } catch {
            Issue.record("the migration failed: \(error)")
        }
        let cancelled = await #expect(throws: DatabaseError.self) { try await database.query("SELECT pg_sleep(0.3)") }
        await database.close()
        await test.drop()
        #expect(applied == [1])
        #expect(cancelled?.isUnavailable == true)
    }

    @Test func eachMigrationIsRecordedWithTheSHA256OfItsText() async throws {
        try await TestDatabase.with { database in
            try await Self.migrations.apply(to: database)
            for migration in Self.migrations.migrations {
                // PostgreSQL's own SHA-256 of the text, beside the one the runner recorded.
                let row = try #require(try await database.query(
                    """
                    SELECT checksum, encode(sha256(convert_to(\(migration.sql), 'UTF8')), 'hex') AS expected
                    FROM schema_migrations WHERE version = \(migration.version)
                    """).first)
                #expect(try row.decode("checksum", as: String.self) == row.decode("expected", as: String.self))
                #expect(try row.decode("checksum", as: String.self) == migration.checksum)
            }
        }
    }

    @Test func twoProcessesStartingAtOnceApplyEachMigrationOnce() async throws {
        let test = try await TestDatabase.create()
        let other = Database(configuration: test.configuration, logger: Logger(label: "second-process"))
        do {
            for _ in 0..<3 {
                async let first = Self.migrations.apply(to: test.database)
                async let second = Self.migrations.apply(to: other)
                let applied = try await first.count + second.count
                // Only the first round applies anything.
                #expect(applied == 0 || applied == 2)
            }
            #expect(try await test.database.query("SELECT version FROM schema_migrations").count == 2)
            #expect(try await test.database.query("SELECT * FROM posts").count == 1)
        } catch {
            await other.close()
            await test.drop()
            throw error
        }
        await other.close()
        await test.drop()
    }

    @Test func laterMigrationsApplyOnTopOfEarlierOnes() async throws {
        try await TestDatabase.with { database in
            try await Migrations(Array(Self.migrations.migrations.prefix(1))).apply(to: database)
            let applied = try await Self.migrations.apply(to: database)
            #expect(applied.map(\.version) == [2])
        }
    }

    @Test func anAppliedMigrationWhoseTextChangedStopsTheStart() async throws {
        try await TestDatabase.with { database in
            try await Self.migrations.apply(to: database)
            var edited = Self.migrations.migrations
            edited[1] = Migration(version: 2, name: "add slug", sql: edited[1].sql + "INSERT INTO posts (title, slug) VALUES ('again', 'again');\n")
            let third = Migration(version: 3, name: "add body", sql: "ALTER TABLE posts ADD COLUMN body text")
            await #expect(throws: Migrations.EditedMigration(
                version: 2, name: "add slug", applied: Self.migrations.migrations[1].checksum, current: edited[1].checksum
            )) { try await Migrations(edited + [third]).apply(to: database) }
            // Nothing ran: neither the edit nor the migration after it.
            #expect(try await database.query("SELECT * FROM posts").count == 1)
            #expect(try await database.query("SELECT version FROM schema_migrations").count == 2)
        }
    }

    /// The table of a database migrated before checksums were kept: its migrations get their
    /// texts' checksums on the next start, and are held to them from then on.
    @Test func migrationsAppliedBeforeChecksumsWereKeptGetThemOnTheNextStart() async throws {
        try await TestDatabase.with { database in
            try await database.execute("CREATE TABLE schema_migrations (version bigint PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())")
            try await database.withConnection { try await $0.executeScript(unescaped: Self.migrations.migrations[0].sql) }
            try await database.execute("INSERT INTO schema_migrations (version, name) VALUES (1, 'create posts')")

            #expect(try await Self.migrations.apply(to: database).map(\.version) == [2])
            let recorded = try await database.query("SELECT checksum FROM schema_migrations ORDER BY version")
            #expect(try recorded.map { try $0.decode("checksum", as: String.self) } == Self.migrations.migrations.map(\.checksum))

            let edited = Migration(version: 1, name: "create posts", sql: Self.migrations.migrations[0].sql + " ")
            await #expect(throws: Migrations.EditedMigration.self) {
                try await Migrations([edited, Self.migrations.migrations[1]]).apply(to: database)
            }
        }
    }

    @Test func aFailingMigrationLeavesNothingBehind() async throws {
        try await TestDatabase.with { database in
            let broken = Migrations(Self.migrations.migrations + [Migration(version: 3, name: "broken", sql: "ALTER TABLE nope ADD x int")])
            await #expect(throws: DatabaseError.self) { try await broken.apply(to: database) }
            let rows = try await database.query("SELECT to_regclass('posts') IS NULL AS missing")
            #expect(try rows.first?.decode("missing", as: Bool.self) == true)
        }
    }
}

/// The record of released migrations' checksums that every service's tests hold its schema to.
@Suite struct MigrationChecksumRecordTests {
    static let released = [
        Migration(version: 1, name: "create posts", sql: "CREATE TABLE posts (id text PRIMARY KEY)"),
        Migration(version: 2, name: "add title", sql: "ALTER TABLE posts ADD COLUMN title text"),
    ]
    static let record = """
        # comment lines are skipped
        blog 1 \(released[0].checksum) create posts
        blog 2 \(released[1].checksum) add title
        other 3 0000 another service's
        """

    @Test func theRecordedMigrationsAsReleasedHaveNoProblem() throws {
        #expect(try MigrationChecksums.problems(service: "blog", migrations: Migrations(Self.released), record: Self.record).isEmpty)
    }

    @Test func anEditedMigrationIsNamed() throws {
        let edited = [Self.released[0], Migration(version: 2, name: "add title", sql: "ALTER TABLE posts ADD COLUMN title text NOT NULL")]
        #expect(try MigrationChecksums.problems(service: "blog", migrations: Migrations(edited), record: Self.record)
            == ["migration 2 of blog was edited after release: restore its text and add a new migration instead"])
    }

    @Test func aNewMigrationAsksForItsLine() throws {
        let third = Migration(version: 3, name: "add body", sql: "ALTER TABLE posts ADD COLUMN body text")
        #expect(try MigrationChecksums.problems(service: "blog", migrations: Migrations(Self.released + [third]), record: Self.record)
            == ["migration 3 of blog has no recorded checksum: record it in migrations.sha256: blog 3 \(third.checksum) add body"])
    }

    @Test func aRemovedMigrationIsNamed() throws {
        #expect(try MigrationChecksums.problems(service: "blog", migrations: Migrations([Self.released[1]]), record: Self.record)
            == ["migration 1 of blog was released and is gone: restore it"])
    }
}
