import PostlyPostgres
import Synchronization
import Testing
import TestSupport

/// Signals that wake this process's listeners when a transaction commits, instead of NOTIFY.
@Suite("Commit signals")
struct CommitSignalTests {
    struct Boom: Error {}

    /// What the handlers of one channel were called with, in order.
    final class Heard: Sendable {
        let payloads = Mutex<[String]>([])
        var all: [String] { payloads.withLock { $0 } }
    }

    @Test func handlersRunWhenTheTransactionHasCommittedAndBeforeItReturns() async throws {
        try await TestDatabase.with { database in
            try await database.execute("CREATE TABLE items (n int)")
            let heard = Heard()
            let subscription = database.onCommit(signalling: "items") { payload in heard.payloads.withLock { $0.append(payload) } }
            defer { subscription.cancel() }
            try await database.transaction { connection in
                try await connection.execute("INSERT INTO items VALUES (1)")
                connection.signalAfterCommit("items", payload: "1")
                connection.signalAfterCommit("items", payload: "1")
                connection.signalAfterCommit("elsewhere", payload: "x")
                // Not before the commit.
                #expect(heard.all.isEmpty)
            }
            #expect(heard.all == ["1"], "once per distinct signal, by the time the transaction returns")
        }
    }

    @Test func aRolledBackTransactionSignalsNothing() async throws {
        try await TestDatabase.with { database in
            let heard = Heard()
            let subscription = database.onCommit(signalling: "items") { payload in heard.payloads.withLock { $0.append(payload) } }
            defer { subscription.cancel() }
            await #expect(throws: Boom.self) {
                try await database.transaction { connection in
                    connection.signalAfterCommit("items", payload: "lost")
                    throw Boom()
                }
            }
            #expect(heard.all.isEmpty)
        }
    }

    /// The connection lost while COMMIT was on its way: it may have committed, so a cache that
    /// the signal drops must not keep what it may have changed.
    @Test func aCommitWhoseOutcomeIsUnknownStillSignals() async throws {
        try await TestDatabase.with { database in
            try await database.execute("CREATE TABLE items (n int)")
            try await database.slowCommits(of: "items")
            let heard = Heard()
            let subscription = database.onCommit(signalling: "items") { payload in heard.payloads.withLock { $0.append(payload) } }
            defer { subscription.cancel() }
            async let terminated = database.endBackendCommitting()
            let error = await #expect(throws: DatabaseError.self) {
                try await database.transaction { connection in
                    try await connection.execute("INSERT INTO items VALUES (1)")
                    connection.signalAfterCommit("items", payload: "1")
                }
            }
            #expect(try await terminated)
            #expect(error == .commitOutcomeUnknown)
            #expect(heard.all == ["1"])
        }
    }

    @Test func outsideATransactionTheSignalIsDeliveredAtOnceAndCancelledHandlersHearNothing() async throws {
        try await TestDatabase.with { database in
            let heard = Heard()
            let subscription = database.onCommit(signalling: "items") { payload in heard.payloads.withLock { $0.append(payload) } }
            try await database.withConnection { $0.signalAfterCommit("items", payload: "now") }
            #expect(heard.all == ["now"])
            subscription.cancel()
            try await database.withConnection { $0.signalAfterCommit("items", payload: "later") }
            #expect(heard.all == ["now"])
        }
    }
}
