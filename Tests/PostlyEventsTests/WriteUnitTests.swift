import Foundation
import PostlyEvents
import PostlyModels
import PostlyPostgres
import Synchronization
import Testing
import TestSupport

/// The write unit: one transaction for the change, the event's sequence and the outbox;
/// transient errors run it again; idempotent writes answer the first answer.
@Suite struct WriteUnitTests {
    let schema = Migrations([
        Outbox.migration,
        WriteUnit.migration(version: 2),
        Migration(version: 3, name: "rows", sql: "CREATE TABLE rows (id text PRIMARY KEY, n integer NOT NULL); INSERT INTO rows VALUES ('a', 0), ('b', 0)"),
    ])

    @Test func eachKeysEventsTakeTheNextSequenceFromOnePlace() async throws {
        try await TestDatabase.with { database in
            try await schema.apply(to: database)
            let writes = WriteUnit(database: database, producer: "tests", logger: testLogger)
            let user = UserSnapshot(userId: "u", name: "U", profilePicture: nil)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<10 {
                    group.addTask {
                        _ = try await writes.write { try await $0.emit(.userUpdated(user), key: "u", actorId: "u") }
                    }
                }
                try await group.waitForAll()
            }
            let other = try await writes.write { try await $0.emit(.userUpdated(user), key: "v", actorId: "v") }
            let rows = try await database.query("SELECT payload FROM outbox ORDER BY id")
            let events = try rows.map { try PostlyJSON.decoder().decode(Event.self, from: Data($0.decode("payload", as: [UInt8].self))) }
            #expect(events.filter { $0.key == "u" }.map(\.sequence) == Array(1...10), "in outbox order, without gaps")
            #expect(other.sequence == 1)
            #expect(events.allSatisfy { $0.producer == "tests" })
        }
    }

    /// Several events emitted at once (the scheduler's batch) are numbered as one at a time
    /// would number them, and reach the outbox in their order, each intact.
    @Test func eventsEmittedTogetherTakeEachKeysNextSequencesInOrder() async throws {
        try await TestDatabase.with { database in
            try await schema.apply(to: database)
            let writes = WriteUnit(database: database, producer: "tests", logger: testLogger)
            func user(_ name: String) -> EventData { .userUpdated(UserSnapshot(userId: "u", name: name, profilePicture: nil)) }
            _ = try await writes.write { try await $0.emit(user("first"), key: "u", actorId: nil) }
            let together = try await writes.write { transaction in
                try await transaction.emit([(user("second"), "u"), (user("\"quoted\" \\ ünïcode"), "v"), (user("third"), "u")], actorId: nil)
            }
            #expect(together.map(\.sequence) == [2, 1, 3])
            let rows = try await database.query("SELECT payload FROM outbox ORDER BY id")
            let events = try rows.map { try PostlyJSON.decoder().decode(Event.self, from: Data($0.decode("payload", as: [UInt8].self))) }
            #expect(events.map(\.id) == [events[0].id] + together.map(\.id), "in the order emitted")
            #expect(events.map(\.sequence) == [1, 2, 1, 3])
            #expect(events[2].data == user("\"quoted\" \\ ünïcode"), "the payload's bytes as encoded")
        }
    }

    @Test func aDeadlockBetweenTwoWritesEndsWithBothCommitted() async throws {
        try await TestDatabase.with(poolSize: 4) { database in
            try await schema.apply(to: database)
            let writes = WriteUnit(database: database, producer: "tests", logger: testLogger)
            let attempts = Locked(0)
            // Each locks one row, waits until both hold theirs, then wants the other's: the
            // first time round PostgreSQL must break the cycle by failing one with 40P01.
            let bothLocked = Barrier(parties: 2)
            func crossing(_ first: String, _ second: String) async throws {
                try await writes.write { transaction in
                    let attempt = attempts.withLock { $0 += 1; return $0 }
                    try await transaction.connection.execute("UPDATE rows SET n = n + 1 WHERE id = \(first)")
                    if attempt <= 2 { await bothLocked.arrive() }
                    try await transaction.connection.execute("UPDATE rows SET n = n + 1 WHERE id = \(second)")
                }
            }
            async let one: Void = crossing("a", "b")
            async let two: Void = crossing("b", "a")
            _ = try await (one, two)
            let counts = try await database.query("SELECT n FROM rows ORDER BY id").map { try $0.decode("n", as: Int.self) }
            #expect(counts == [2, 2], "both changes committed, each once")
            #expect(attempts.withLock { $0 } == 3, "the deadlock's victim ran once more")
        }
    }

    /// A write's COMMIT lost with its connection (the backend ended while committing): the
    /// transaction's id, which `emit` notes, lets the server say it rolled back, and the write
    /// runs again, once, where it answered 503 (and a client's retry could write twice).
    @Test func aWriteWhoseCommitWasLostIsSettledAndWrittenOnce() async throws {
        try await TestDatabase.with { database in
            try await schema.apply(to: database)
            try await database.slowCommits(of: "rows")
            let writes = WriteUnit(database: database, producer: "tests", logger: testLogger)
            async let terminated = database.endBackendCommitting()
            let user = UserSnapshot(userId: "u", name: "U", profilePicture: nil)
            let event = try await writes.write { transaction in
                try await transaction.connection.execute("UPDATE rows SET n = n + 1 WHERE id = 'a'")
                return try await transaction.emit(.userUpdated(user), key: "u", actorId: "u")
            }
            #expect(try await terminated)
            #expect(event.sequence == 1)
            #expect(try await database.query("SELECT n FROM rows WHERE id = 'a'")[0].decode("n", as: Int.self) == 1)
            #expect(try await database.query("SELECT id FROM outbox").count == 1)
        }
    }

    @Test func aTransientErrorThatPersistsIsThrownAfterTheLastAttempt() async throws {
        try await TestDatabase.with { database in
            try await schema.apply(to: database)
            let writes = WriteUnit(database: database, producer: "tests", maximumAttempts: 3, logger: testLogger)
            let attempts = Locked(0)
            await #expect(throws: DatabaseError.serializationFailure) {
                try await writes.write { _ in
                    attempts.withLock { $0 += 1 }
                    throw DatabaseError.serializationFailure
                }
            }
            #expect(attempts.withLock { $0 } == 3)
        }
    }

    @Test func anIdempotentWriteAnswersTheFirstAnswerUntilTheKeyExpires() async throws {
        try await TestDatabase.with { database in
            try await schema.apply(to: database)
            let clock = TestClock()
            let writes = WriteUnit(database: database, producer: "tests", clock: clock.now, logger: testLogger)
            func create(_ body: String) async throws -> StoredAnswer {
                let key = IdempotencyKey(key: "k", userId: "u", method: "POST", path: "/rows", body: Array(body.utf8))
                return try await writes.write(idempotency: key) { transaction in
                    let n = try await transaction.connection.query("UPDATE rows SET n = n + 1 WHERE id = 'a' RETURNING n")
                    return StoredAnswer(status: 201, headers: [.init("Location", "/rows/a")], body: Array("\(try n[0].decode("n", as: Int.self))".utf8))
                }
            }
            let first = try await create("x")
            #expect(try await create("x") == first)
            await #expect(throws: IdempotencyError.keyReused) { try await create("y") }
            clock.advance(by: IdempotencyKey.lifetime + 1)
            #expect(try await writes.purgeExpiredAnswers() == 1)
            let afterExpiry = try await create("y")
            #expect(afterExpiry.body == Array("2".utf8), "an expired key is a new request")
        }
    }
}

extension WriteUnitTests {
    /// Expired answers go a chunk a statement, all of them, and the live ones stay.
    @Test func expiredAnswersArePurgedInChunks() async throws {
        try await TestDatabase.with { database in
            try await schema.apply(to: database)
            let clock = TestClock()
            let writes = WriteUnit(database: database, producer: "tests", clock: clock.now, logger: testLogger)
            func answer(_ key: String) async throws {
                let idempotency = IdempotencyKey(key: key, userId: "u", method: "POST", path: "/rows", body: [])
                _ = try await writes.write(idempotency: idempotency) { _ in StoredAnswer(status: 204, headers: [], body: []) }
            }
            for n in 0..<25 { try await answer("old-\(n)") }
            clock.advance(by: IdempotencyKey.lifetime + 1)
            try await answer("live")
            #expect(try await writes.purgeExpiredAnswers(chunk: 10) == 25)
            let left = try await database.query("SELECT key FROM idempotency_answers").map { try $0.decode("key", as: String.self) }
            #expect(left == ["live"])
        }
    }

    /// An expired key used again while the purge runs holds a new answer: the purge leaves it
    /// (it deleted it, and the request's retry ran the write a second time).
    @Test func aKeyAnsweredAgainDuringThePurgeKeepsItsNewAnswer() async throws {
        try await TestDatabase.with { database in
            try await schema.apply(to: database)
            let clock = TestClock()
            let writes = WriteUnit(database: database, producer: "tests", clock: clock.now, logger: testLogger)
            let idempotency = IdempotencyKey(key: "k", userId: "u", method: "POST", path: "/rows", body: [])
            _ = try await writes.write(idempotency: idempotency) { _ in StoredAnswer(status: 204, headers: [], body: []) }
            clock.advance(by: IdempotencyKey.lifetime + 1)
            let answeredAgain = clock.now()
            let purged = try await database.whileLocked(by: { connection in
                try await connection.execute("UPDATE idempotency_answers SET created_at = \(answeredAgain), status = 201 WHERE key = 'k'")
            }) { () async throws -> Task<Int, any Error> in
                let purging = Task { try await writes.purgeExpiredAnswers() }
                #expect(try await eventually(within: .seconds(5)) { try await database.someoneWaitsForALock() })
                return purging
            }
            #expect(try await purged.value == 0)
            let left = try await database.query("SELECT status FROM idempotency_answers WHERE key = 'k'").map { try $0.decode("status", as: Int.self) }
            #expect(left == [201])
        }
    }
}

/// Lets `parties` tasks wait until all of them have arrived.
final class Barrier: Sendable {
    private let state: Mutex<(arrived: Int, waiting: [CheckedContinuation<Void, Never>])>
    private let parties: Int

    init(parties: Int) {
        self.parties = parties
        state = Mutex((0, []))
    }

    func arrive() async {
        await withCheckedContinuation { continuation in
            let released = state.withLock { state -> [CheckedContinuation<Void, Never>] in
                state.arrived += 1
                state.waiting.append(continuation)
                guard state.arrived >= parties else { return [] }
                defer { state.waiting = [] }
                return state.waiting
            }
            for waiter in released { waiter.resume() }
        }
    }
}
