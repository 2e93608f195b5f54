import Foundation
import Hummingbird
import HummingbirdTesting
import PostlyEvents
import PostlyModels
import PostlyPostgres
import ServiceLifecycle
import Synchronization
import Testing
import TestSupport

@testable import PostlyService

/// The kit's lifecycle and routing: start-up work before what uses the tables, 405s for the
/// methods a path does not take, and one-off commands that drain the outbox and close
/// everything on every path.
@Suite struct ServiceKitTests {
    /// A migration a consumer's first statement would need.
    static let schema = Migrations([
        Outbox.migration, WriteUnit.migration(version: 2),
        Migration(version: 3, name: "notes", sql: "CREATE TABLE notes (id text PRIMARY KEY)"),
    ])

    static func kit(_ database: TestDatabase, publishesEvents: Bool = false, importToken: String? = nil) throws -> ServiceKit {
        var configuration = ServiceConfiguration(name: "kit-test", defaultPort: 0, environment: [:])
        configuration.importToken = importToken.map(Secret.init)
        configuration.postgres = database.configuration
        configuration.kafka = try testConfiguration()
        return try ServiceKit(configuration, schema: schema, publishesEvents: publishesEvents, logger: testLogger)
    }

    /// Records what happened, in order.
    final class Journal: Sendable {
        private let entries = Mutex<[String]>([])
        func record(_ entry: String) { entries.withLock { $0.append(entry) } }
        var all: [String] { entries.withLock { $0 } }
    }

    /// Stands for a consumer: its first act reads the service's table.
    struct TableReader: Service {
        let database: Database
        let journal: Journal

        func run() async throws {
            _ = try await database.query("SELECT count(*) FROM notes")
            journal.record("read the table")
            try? await gracefulShutdown()
        }
    }

    @Test func longRunningPartsStartOnlyAfterTheStartUpWork() async throws {
        let database = try await TestDatabase.create()
        let kit = try Self.kit(database)
        let journal = Journal()
        let app = kit.application(
            router: kit.makeRouter(openAPI: OpenAPIDocument(#"{"openapi": "3.1.0"}"#)),
            services: [TableReader(database: kit.database, journal: journal)],
            startup: {
                // Slow start-up work: the reader must wait for it, and find the table then.
                try await Task.sleep(for: .milliseconds(300))
                journal.record("started")
            })
        try await app.test(.router) { _ in
            let settled = try await eventually(within: .seconds(5)) { journal.all.count == 2 }
            #expect(settled)
        }
        #expect(journal.all == ["started", "read the table"])
        await database.drop()
    }

    @Test func aMethodARoutedPathDoesNotTakeAnswers405NamingTheOnesItDoes() async throws {
        let database = try await TestDatabase.create()
        let kit = try Self.kit(database)
        let router = kit.makeRouter(openAPI: OpenAPIDocument(#"{"openapi": "3.1.0"}"#))
        router.get("notes") { _, _ in "all" }
        router.post("notes") { _, _ in "made" }
        router.get("notes/:id") { _, context in try context.parameters.require("id") }
        router.delete("notes/:id") { _, _ in HTTPResponse.Status.noContent }
        try await kit.application(router: router).test(.router) { client in
            for (method, uri, allow) in [
                (HTTPRequest.Method.put, "/notes/1", "DELETE, GET"), (.patch, "/notes", "GET, POST"),
                (.options, "/notes", "GET, POST"), (HTTPRequest.Method("QUERY")!, "/notes/1", "DELETE, GET"),
            ] {
                try await client.execute(uri: uri, method: method) { response in
                    #expect(response.status == .methodNotAllowed && response.headers[.allow] == allow, "\(method) \(uri): \(response.status) \(response.headers)")
                    #expect(response.headers[.contentType] == "application/problem+json")
                }
            }
            // What a path does take still works; a path nobody routed is still not found.
            try await client.execute(uri: "/notes/7", method: .get) { #expect(String(buffer: $0.body) == "7") }
            try await client.execute(uri: "/nothing", method: .post) { #expect($0.status == .notFound) }
        }
        await database.drop()
    }

    /// A request's database waits end by its deadline, under the gateway's 60 s; work outside a
    /// request (a consumer, a command) and the import routes, which the gateway never sees,
    /// have none.
    @Test func aRequestsDatabaseWaitsHaveItsDeadline() async throws {
        let database = try await TestDatabase.create()
        let kit = try Self.kit(database, importToken: "import-token")
        let router = kit.makeRouter(openAPI: OpenAPIDocument(#"{"openapi": "3.1.0"}"#))
        for path in ["deadline", "internal/deadline"] {
            router.get(.init(path)) { _, _ in
                Database.deadline.map { "\(ContinuousClock.now.duration(to: $0) / .milliseconds(1))" } ?? "none"
            }
        }
        try await kit.application(router: router).test(.router) { client in
            try await client.execute(uri: "/deadline", method: .get) { response in
                let left = try #require(Double(String(buffer: response.body)))
                #expect((39_000...40_000).contains(left), "\(left) ms")
            }
            try await client.execute(uri: "/internal/deadline", method: .get, headers: [.authorization: "Bearer import-token"]) { response in
                #expect(String(buffer: response.body) == "none")
            }
        }
        #expect(Database.deadline == nil)
        await database.drop()
    }

    @Test func aCommandPublishesWhatItWroteBeforeItReturns() async throws {
        let database = try await TestDatabase.create()
        let kit = try Self.kit(database, publishesEvents: true)
        let user = UserSnapshot(userId: UUID().uuidString, name: "Ada", profilePicture: nil)
        try await kit.run {
            _ = try await kit.writes.write { try await $0.emit(.userUpdated(user), key: user.userId, actorId: nil) }
        }
        let pending = try await database.database.query("SELECT count(*) AS pending FROM outbox WHERE sent_at IS NULL")
        #expect(try pending.first?.decode("pending", as: Int.self) == 0)
        await database.drop()
    }

    struct CommandFailed: Error {}

    @Test func aCommandThatThrowsStillClosesEverything() async throws {
        let database = try await TestDatabase.create()
        let kit = try Self.kit(database)
        await #expect(throws: CommandFailed.self) {
            try await kit.run { () async throws -> Int in throw CommandFailed() }
        }
        // The migrations ran first; the pool is closed now.
        await #expect(throws: DatabaseError.closed) { _ = try await kit.database.query("SELECT 1 FROM notes") }
        let tables = try await database.database.query("SELECT count(*) AS tables FROM pg_tables WHERE tablename = 'notes'")
        #expect(try tables.first?.decode("tables", as: Int.self) == 1)
        await database.drop()
    }
}
