import Logging
import PostlyPostgres
import Synchronization
import Testing
import TestSupport

/// How often a listener's `LISTEN` took effect.
final class ListeningCount: Sendable {
    private let value = Mutex(0)
    func add() { value.withLock { $0 += 1 } }
    var count: Int { value.withLock { $0 } }
}

@Suite("Surviving a server restart", .serialized, .timeLimit(.minutes(2)))
struct RestartTests {
    @Test func thePoolFailsFastWhileTheServerIsDownAndRecoversAfterwards() async throws {
        let server = try await TestPostgresServer.start()
        let database = Database(configuration: server.configuration(poolSize: 4), logger: Logger(label: "restart-test"))
        do {
            // Open every connection, so all of them go stale at the restart.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<4 { group.addTask { try await database.execute("SELECT pg_sleep(0.05)") } }
                try await group.waitForAll()
            }
            let listenings = ListeningCount()
            var listener = database.listen(channel: "restart", onStartingOver: { listenings.add() }).makeAsyncIterator()
            try await waitUntilListening(database, channel: "restart", iterator: &listener)
            #expect(listenings.count == 1)

            try await server.stop()
            for _ in 0..<3 {
                let started = ContinuousClock.now
                let error = await #expect(throws: DatabaseError.self) { try await database.ping() }
                let elapsed = ContinuousClock.now - started
                guard case .connectionFailed = error else {
                    Issue.record("expected connectionFailed, got \(String(describing: error))")
                    break
                }
                #expect(elapsed < .seconds(3), "failed after \(elapsed)")
            }

            try await server.start()
            let sum = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<8 {
                    group.addTask { try await database.query("SELECT \(index) AS n").first!.decode("n", as: Int.self) }
                }
                return try await group.reduce(0, +)
            }
            #expect(sum == 28)
            // The listener reconnects and LISTENs again by itself.
            try await waitUntilListening(database, channel: "restart", iterator: &listener)
            try await database.notify(channel: "restart", payload: "after restart")
            #expect(await listener.next() == "after restart")
            // What was sent while it was away is lost: the listener is told it started again.
            #expect(listenings.count == 2)
        } catch {
            await database.close()
            await server.destroy()
            throw error
        }
        await database.close()
        await server.destroy()
    }

    @Test func aTransactionWhoseConnectionIsLostFailsInsteadOfHalfCommitting() async throws {
        let server = try await TestPostgresServer.start()
        let database = Database(configuration: server.configuration(poolSize: 1), logger: Logger(label: "restart-test"))
        do {
            try await database.execute("CREATE TABLE steps (n int)")
            await #expect(throws: DatabaseError.self) {
                try await database.transaction { connection in
                    try await connection.execute("INSERT INTO steps VALUES (1)")
                    try await server.stop()
                    try await server.start()
                    try await connection.execute("INSERT INTO steps VALUES (2)")
                }
            }
            #expect(try await database.query("SELECT n FROM steps").isEmpty)
        } catch {
            await database.close()
            await server.destroy()
            throw error
        }
        await database.close()
        await server.destroy()
    }
}
