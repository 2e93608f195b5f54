import Foundation
import PostlyPostgres
import Testing
import TestSupport

@Suite("LISTEN and NOTIFY", .timeLimit(.minutes(1)))
struct ListenNotifyTests {
    @Test func aNotificationArrivesWithin100Milliseconds() async throws {
        try await TestDatabase.with { database in
            let notifications = database.listen(channel: "outbox")
            var iterator = notifications.makeAsyncIterator()
            // Until the listener's LISTEN is in place, notifications go nowhere: wait for a first one.
            try await waitUntilListening(database, channel: "outbox", iterator: &iterator)

            for round in 0..<5 {
                let sent = ContinuousClock.now
                try await database.notify(channel: "outbox", payload: "event \(round) \u{1F600} 'quoted'")
                let payload = await iterator.next()
                let elapsed = ContinuousClock.now - sent
                #expect(payload == "event \(round) \u{1F600} 'quoted'")
                #expect(elapsed < .milliseconds(100), "delivered in \(elapsed)")
            }
        }
    }

    @Test func channelsAreSeparateAndNamesAreData() async throws {
        try await TestDatabase.with { database in
            let channel = "odd \"channel\"; --"
            var odd = database.listen(channel: channel).makeAsyncIterator()
            var other = database.listen(channel: "other").makeAsyncIterator()
            try await waitUntilListening(database, channel: channel, iterator: &odd)
            try await waitUntilListening(database, channel: "other", iterator: &other)
            try await database.notify(channel: "other", payload: "for other")
            try await database.notify(channel: channel, payload: "for odd")
            #expect(await odd.next() == "for odd")
            #expect(await other.next() == "for other")
        }
    }

    /// A reader 10,000 notifications behind loses the oldest: it is told to start over, as
    /// after a lost connection (it was not told, and a read model kept what they dropped).
    @Test func aReaderTooFarBehindIsToldToStartOver() async throws {
        try await TestDatabase.with { database in
            let startsOver = Locked(0)
            let notifications = database.listen(channel: "busy") { startsOver.withLock { $0 += 1 } }
            var iterator = notifications.makeAsyncIterator()
            try await waitUntilListening(database, channel: "busy", iterator: &iterator)
            #expect(startsOver.value == 1)
            try await database.execute("SELECT pg_notify('busy', n::text) FROM generate_series(1, 10001) AS n")
            #expect(try await eventually(within: .seconds(10)) { startsOver.value == 2 })
        }
    }

    @Test func cancellingTheIteratingTaskEndsTheSequence() async throws {
        try await TestDatabase.with { database in
            let notifications = database.listen(channel: "ends")
            let consumer = Task {
                var count = 0
                for await _ in notifications { count += 1 }
                return count
            }
            try await Task.sleep(for: .milliseconds(200))
            consumer.cancel()
            _ = await consumer.value
            // The listener's connection goes away with it.
            try await Task.sleep(for: .milliseconds(500))
            let listeners = try await database.query(
                "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%'")
            #expect(try listeners.first?.decode("n", as: Int.self) == 0)
        }
    }
}

/// Notifies until the listener delivers (its LISTEN runs asynchronously), draining the probes.
func waitUntilListening(
    _ database: Database, channel: String, iterator: inout AsyncStream<String>.Iterator,
    timeout: Duration = .seconds(10)
) async throws {
    let deadline = ContinuousClock.now + timeout
    let probe = "probe-\(UUID())"
    await withTaskGroup(of: Void.self) { group in
        group.addTask {
            while ContinuousClock.now < deadline, !Task.isCancelled {
                try? await database.notify(channel: channel, payload: probe)
                try? await Task.sleep(for: .milliseconds(50))
            }
        }
        while let payload = await iterator.next() {
            if payload == probe { break }
        }
        group.cancelAll()
    }
    // Probes already in flight.
    try await Task.sleep(for: .milliseconds(100))
    try await drain(channel: channel, database: database, iterator: &iterator, marker: "drained-\(UUID())")
}

/// Sends `marker` and consumes everything up to it.
private func drain(
    channel: String, database: Database, iterator: inout AsyncStream<String>.Iterator, marker: String
) async throws {
    try await database.notify(channel: channel, payload: marker)
    while let payload = await iterator.next(), payload != marker {}
}
