import Foundation
import PostlyEvents
import PostlyKafka
import PostlyModels
import PostlyPostgres
import Synchronization
import TestSupport

/// The service side of the tests: the outbox's tables, plus one the test handler writes.
let schema = Migrations([
    Outbox.migration,
    Migration(
        version: 2, name: "applied",
        sql: "CREATE TABLE applied (event_id uuid NOT NULL, key text NOT NULL, sequence bigint NOT NULL, applied_at timestamptz NOT NULL DEFAULT clock_timestamp())"),
])

/// Records every event it is handed, in the consuming service's database; fails for good
/// on sequence 13.
struct RecordingHandler: EventHandler {
    struct Unlucky: Error {}

    func apply(_ event: Event, in connection: DatabaseConnection) async throws {
        if event.sequence == 13 { throw Unlucky() }
        try await connection.execute(
            "INSERT INTO applied (event_id, key, sequence) VALUES (\(event.id), \(event.key), \(event.sequence))")
    }
}

/// Records as `RecordingHandler` does, after a statement cancelled by its timeout the first two
/// times it applies sequence 21: what a database that cannot do it now answers.
final class TimingOutTwice: EventHandler, Sendable {
    private let count = Mutex(0)

    var timeouts: Int { count.withLock { $0 } }

    func apply(_ event: Event, in connection: DatabaseConnection) async throws {
        let timesOut = event.sequence == 21 && count.withLock { count in
            defer { count = min(count + 1, 2) }
            return count < 2
        }
        if timesOut {
            try await connection.execute("SET LOCAL statement_timeout = '20ms'")
            try await connection.execute("SELECT pg_sleep(1)")
        }
        try await RecordingHandler().apply(event, in: connection)
    }
}

/// Records as `RecordingHandler` does, after writing to `made_later`, a table a migration of the
/// next release makes: until it is made, the server answers 42P01 (undefined table).
final class WritingToATableMadeLater: EventHandler, Sendable {
    private let count = Mutex(0)

    var attempts: Int { count.withLock { $0 } }

    func apply(_ event: Event, in connection: DatabaseConnection) async throws {
        count.withLock { $0 += 1 }
        try await connection.execute("INSERT INTO made_later (sequence) VALUES (\(event.sequence))")
        try await RecordingHandler().apply(event, in: connection)
    }
}

/// A `user.updated` event of user `key`; events on `postly.users`.
func userEvent(key: String, sequence: Int64, id: UUID = UUID()) -> Event {
    Event(
        id: id, producer: "tests", key: key, sequence: sequence, actorId: key,
        data: .userUpdated(UserSnapshot(userId: key, name: "name \(sequence)", profilePicture: nil)))
}

func encoded(_ event: Event) throws -> [UInt8] {
    try [UInt8](PostlyJSON.encoder().encode(event))
}

func decodedEvents(_ messages: [KafkaMessage]) throws -> [Event] {
    try messages.map { try PostlyJSON.decoder().decode(Event.self, from: Data($0.value)) }
}

/// Adds `events` through the outbox, `perTransaction` at a time.
func write(_ events: [Event], perTransaction: Int, to database: Database) async throws {
    for start in stride(from: 0, to: events.count, by: perTransaction) {
        let batch = Array(events[start..<min(start + perTransaction, events.count)])
        try await database.transaction { connection in
            try await Outbox.add(batch, in: connection)
        }
    }
}

func pendingCount(in database: Database) async throws -> Int {
    try await database.query("SELECT count(*) AS n FROM outbox WHERE sent_at IS NULL")[0].decode("n", as: Int.self)
}

/// Each key's sequences in arrival order.
func sequencesByKey(_ events: [Event]) -> [String: [Int64]] {
    Dictionary(grouping: events, by: \.key).mapValues { $0.map(\.sequence) }
}


/// A broker of the test's own with Postly's topics.
func startBroker() async throws -> (TestBroker, KafkaConfiguration) {
    let broker = try await TestBroker.start()
    let kafka = try testConfiguration(brokers: broker.brokers, messageTimeout: .seconds(2))
    try await KafkaTopics.create(Topic.allCases.map(\.rawValue), configuration: kafka)
    return (broker, kafka)
}
