import Foundation
import Logging
import PostlyEvents
import PostlyKafka
import PostlyModels
import PostlyPostgres
import PostlyService
import ServiceLifecycle
import Synchronization

// Events through the whole path: written with a change in a database transaction, published
// by the outbox relay, consumed by an event consumer runner that applies each one in a
// transaction of its own. Reports events per second end to end, and the delay from commit
// to handler (p50/p99), under a burst and under a trickle.

let burstEvents = Int(ProcessInfo.processInfo.environment["BENCH_EVENTS"] ?? "") ?? 10_000
var logger = Logger(label: "outbox-bench")
logger.logLevel = .warning

/// Records when each event reached the handler, against when it was committed.
final class Arrivals: Sendable {
    private let delays = Mutex<[Duration]>([])
    private let committed = Mutex<[UUID: ContinuousClock.Instant]>([:])

    func commit(_ ids: [UUID], at instant: ContinuousClock.Instant) {
        committed.withLock { for id in ids { $0[id] = instant } }
    }

    func arrived(_ id: UUID) {
        let now = ContinuousClock.now
        guard let start = committed.withLock({ $0[id] }) else { return }
        delays.withLock { $0.append(start.duration(to: now)) }
    }

    var count: Int { delays.withLock { $0.count } }

    func reset() {
        delays.withLock { $0 = [] }
    }

    func percentile(_ p: Double) -> Duration {
        let sorted = delays.withLock { $0.sorted() }
        guard !sorted.isEmpty else { return .zero }
        return sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
    }
}

struct MeasuringHandler: EventHandler {
    let arrivals: Arrivals
    func apply(_ event: Event, in connection: DatabaseConnection) async throws {
        try await connection.execute("INSERT INTO applied (event_id) VALUES (\(event.id))")
        arrivals.arrived(event.id)
    }
}

/// The `count` events of one writer: 25 users of its own, each user's sequence growing in
/// the order they are written (a consumer would rightly skip an older one).
func userEvents(writer: Int, count: Int) -> [Event] {
    (0..<count).map { index in
        let key = "user-\(writer)-\(index % 25)"
        return Event(
            producer: "bench", key: key, sequence: Int64(index / 25 + 1), actorId: key,
            data: .userUpdated(UserSnapshot(userId: key, name: "name \(index)", profilePicture: nil)))
    }
}

/// Writes `events` through the outbox, `perTransaction` at a time. The clock of each
/// event starts when its transaction starts (noting it after the commit would race the
/// handler), so the delays include writing and committing.
func write(_ events: [Event], perTransaction: Int, to database: Database, arrivals: Arrivals) async throws {
    for start in stride(from: 0, to: events.count, by: perTransaction) {
        let batch = Array(events[start..<min(start + perTransaction, events.count)])
        arrivals.commit(batch.map(\.id), at: .now)
        try await database.transaction { connection in
            try await Outbox.add(batch, in: connection)
        }
    }
}

func waitFor(_ count: Int, _ arrivals: Arrivals) async throws {
    let deadline = ContinuousClock.now + .seconds(300)
    while arrivals.count < count, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
}

func format(_ duration: Duration) -> String {
    String(format: "%.1f ms", Double(duration.components.attoseconds) / 1e15 + Double(duration.components.seconds) * 1000)
}

// The POSTGRES_* and KAFKA_* variables as the services read them (bench/run.sh sets them).
let service = ServiceConfiguration(name: "bench", defaultPort: 1)
var postgres = service.postgres
postgres.poolSize = 8
let kafka = service.kafka
let database = Database(configuration: postgres, logger: logger)
try await database.execute("DROP TABLE IF EXISTS outbox, consumed_sequences, applied, schema_migrations")
try await Migrations([Outbox.migration, Migration(version: 2, name: "applied", sql: "CREATE TABLE applied (event_id uuid PRIMARY KEY)")])
    .apply(to: database)
try await KafkaTopics.create(Topic.allCases.map(\.rawValue), configuration: kafka)

let arrivals = Arrivals()
let producer = try KafkaProducer(configuration: kafka, logger: logger)
let relay = OutboxRelay(database: database, publisher: producer, logger: logger)
let runner = EventConsumerRunner(
    name: "bench-\(UUID().uuidString.prefix(8))", topics: [.users], database: database, kafka: kafka, deadLetters: producer,
    handler: MeasuringHandler(arrivals: arrivals), logger: logger)

try await withThrowingTaskGroup(of: Void.self) { group in
    for service in [database, producer, relay, runner] as [any Service] {
        group.addTask { try await service.run() }
    }
    // Warm up: the consumer joins its group.
    try await write(userEvents(writer: 99, count: 1), perTransaction: 1, to: database, arrivals: arrivals)
    try await waitFor(1, arrivals)
    arrivals.reset()

    // A burst: 4 writers, 10 events per transaction.
    let shares = (0..<4).map { userEvents(writer: $0, count: burstEvents / 4) }
    let started = ContinuousClock.now
    try await withThrowingTaskGroup(of: Void.self) { writers in
        for share in shares {
            writers.addTask { try await write(share, perTransaction: 10, to: database, arrivals: arrivals) }
        }
        try await writers.waitForAll()
    }
    let written = started.duration(to: .now)
    try await waitFor(shares.joined().count, arrivals)
    let total = started.duration(to: .now)
    let perSecond = Double(arrivals.count) / (Double(total.components.seconds) + Double(total.components.attoseconds) / 1e18)
    print("burst: \(arrivals.count) events written in \(format(written)) by 4 writers, all handled after \(format(total)): \(Int(perSecond)) events/s end to end")
    print("burst: commit to handler p50 \(format(arrivals.percentile(0.5))), p99 \(format(arrivals.percentile(0.99)))")

    // A trickle: one event per transaction, 50 a second.
    arrivals.reset()
    for event in userEvents(writer: 4, count: 250) {
        try await write([event], perTransaction: 1, to: database, arrivals: arrivals)
        try await Task.sleep(for: .milliseconds(20))
    }
    try await waitFor(250, arrivals)
    print("trickle (50/s): commit to handler p50 \(format(arrivals.percentile(0.5))), p99 \(format(arrivals.percentile(0.99)))")
    group.cancelAll()
}
