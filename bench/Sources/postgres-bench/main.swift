import Foundation
import Logging
import PostgresNIO
import PostlyPostgres
import PostlyService

// Throughput of the same two queries through the libpq layer (PostlyPostgres) and through
// postgres-nio's PostgresClient, each at 1 and 16 concurrent callers, in one run.

let seconds = Double(ProcessInfo.processInfo.environment["BENCH_SECONDS"] ?? "") ?? 3
let rounds = 2
let rowCount = 10_000
let authors = 100
var logger = Logger(label: "postgres-bench")
logger.logLevel = .warning
// The POSTGRES_* variables as the services read them (bench/run.sh sets them).
let configuration = ServiceConfiguration(name: "bench", defaultPort: 1).postgres

/// One way to run the two queries.
protocol Driver: Sendable {
    var name: String { get }
    func primaryKey(_ id: Int) async throws -> String
    func page(author: Int) async throws -> Int
}

struct LibPQDriver: Driver {
    let database: Database
    var name: String { "libpq" }

    func primaryKey(_ id: Int) async throws -> String {
        let rows = try await database.query("SELECT id, title, body, created_at FROM bench_posts WHERE id = \(id)")
        _ = try rows[0].decode("id", as: Int.self)
        _ = try rows[0].decode("created_at", as: Date.self)
        _ = try rows[0].decode("body", as: String.self)
        return try rows[0].decode("title", as: String.self)
    }

    func page(author: Int) async throws -> Int {
        let rows = try await database.query(
            "SELECT id, title, created_at FROM bench_posts WHERE author_id = \(author) ORDER BY id LIMIT 20")
        for row in rows {
            _ = try row.decode("id", as: Int.self)
            _ = try row.decode("title", as: String.self)
            _ = try row.decode("created_at", as: Date.self)
        }
        return rows.count
    }
}

struct PostgresNIODriver: Driver {
    let client: PostgresClient
    var name: String { "postgres-nio" }

    func primaryKey(_ id: Int) async throws -> String {
        let rows = try await client.query("SELECT id, title, body, created_at FROM bench_posts WHERE id = \(id)")
        var title = ""
        for try await (_, t, _, _) in rows.decode((Int, String, String, Date).self) { title = t }
        return title
    }

    func page(author: Int) async throws -> Int {
        let rows = try await client.query(
            "SELECT id, title, created_at FROM bench_posts WHERE author_id = \(author) ORDER BY id LIMIT 20")
        var count = 0
        for try await _ in rows.decode((Int, String, Date).self) { count += 1 }
        return count
    }
}

enum Workload: String, CaseIterable {
    case primaryKey = "primary-key select"
    case page = "20-row page"
}

/// Queries per second of `callers` concurrent loops for `seconds`.
func measure(_ driver: some Driver, _ workload: Workload, callers: Int) async throws -> Double {
    let start = ContinuousClock.now
    let deadline = start + .seconds(seconds)
    let total = try await withThrowingTaskGroup(of: Int.self) { group in
        for caller in 0..<callers {
            group.addTask {
                var count = 0
                var random = SystemRandomNumberGenerator()
                while ContinuousClock.now < deadline {
                    switch workload {
                    case .primaryKey:
                        _ = try await driver.primaryKey(Int.random(in: 1...rowCount, using: &random))
                    case .page:
                        let rows = try await driver.page(author: (caller + count) % authors)
                        precondition(rows == 20)
                    }
                    count += 1
                }
                return count
            }
        }
        return try await group.reduce(0, +)
    }
    return Double(total) / (ContinuousClock.now - start).seconds
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

func seed(_ database: Database) async throws {
    try await database.execute("DROP TABLE IF EXISTS bench_posts")
    try await database.execute("""
        CREATE TABLE bench_posts (
            id bigint PRIMARY KEY, author_id bigint NOT NULL, title text NOT NULL, body text NOT NULL,
            created_at timestamptz NOT NULL)
        """)
    try await database.execute("""
        INSERT INTO bench_posts
        SELECT n, n % \(authors), 'Post number ' || n, repeat('Some body text. ', 20), now() - n * interval '1 minute'
        FROM generate_series(1, \(rowCount)) AS n
        """)
    try await database.execute("CREATE INDEX bench_posts_author ON bench_posts (author_id, id)")
    try await database.execute("ANALYZE bench_posts")
}

var libpqConfiguration = configuration
libpqConfiguration.poolSize = 16
// No server settings (ServiceConfiguration adds a statement_timeout): the postgres-nio client
// below sets none, and both drivers run the same statements under the same settings.
libpqConfiguration.settings = [:]
let database = Database(configuration: libpqConfiguration, logger: logger)
try await seed(database)

var clientConfiguration = PostgresClient.Configuration(
    host: configuration.host, port: configuration.port, username: configuration.user,
    password: configuration.password?.value, database: configuration.database, tls: .disable)
clientConfiguration.options.maximumConnections = 16
let client = PostgresClient(configuration: clientConfiguration, backgroundLogger: logger)

try await withThrowingTaskGroup(of: Void.self) { group in
    group.addTask { await client.run() }
    let drivers: [any Driver] = [LibPQDriver(database: database), PostgresNIODriver(client: client)]
    // Warm up both: connections opened, statements prepared.
    for driver in drivers {
        for workload in Workload.allCases { _ = try await measure(driver, workload, callers: 16) }
    }
    print("Each cell: best of \(rounds) runs of \(seconds) s, queries per second.")
    print("workload            | callers | libpq     | postgres-nio | libpq / postgres-nio")
    print("--------------------|---------|-----------|--------------|---------------------")
    for workload in Workload.allCases {
        for callers in [1, 16] {
            var best = [0.0, 0.0]
            for _ in 0..<rounds {
                for (index, driver) in drivers.enumerated() {
                    best[index] = max(best[index], try await measure(driver, workload, callers: callers))
                }
            }
            let line = [
                workload.rawValue.padding(toLength: 19, withPad: " ", startingAt: 0),
                String(callers).padding(toLength: 7, withPad: " ", startingAt: 0),
                String(format: "%9.0f", best[0]),
                String(format: "%12.0f", best[1]),
                String(format: "%.2f", best[0] / best[1]),
            ]
            print(line.joined(separator: " | "))
        }
    }
    group.cancelAll()
}
await database.close()
