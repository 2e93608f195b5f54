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

    @Test func aFailingMigrationLeavesNothingBehind() async throws {
        try await TestDatabase.with { database in
            let broken = Migrations(Self.migrations.migrations + [Migration(version: 3, name: "broken", sql: "ALTER TABLE nope ADD x int")])
            await #expect(throws: DatabaseError.self) { try await broken.apply(to: database) }
            let rows = try await database.query("SELECT to_regclass('posts') IS NULL AS missing")
            #expect(try rows.first?.decode("missing", as: Bool.self) == true)
        }
    }
}
