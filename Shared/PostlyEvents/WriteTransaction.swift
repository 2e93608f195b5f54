import Foundation
import PostlyModels
import PostlyPostgres

/// The transaction of one write unit: the connection for the change's own statements, and
/// `emit` for its events. Valid only inside the `WriteUnit.write` call that made it.
public struct WriteTransaction: Sendable {
    public let connection: DatabaseConnection
    let producer: String
    /// The write unit's clock when the transaction began (tests move it): what a change that
    /// depends on the time (a scheduled publish) compares with.
    public let now: Date

    /// Appends `data` to the outbox as the next event of aggregate `key`: its `sequence` is
    /// one more than the key's last, taken here and nowhere else. The key's sequence row stays
    /// locked until the commit, so one key's events commit in sequence order. `imported` marks
    /// what an import brought in (`Event.imported`).
    @discardableResult
    public func emit(_ data: EventData, key: String, actorId: String?, imported: Bool = false) async throws -> Event {
        try await emit([(data, key)], actorId: actorId, imported: imported)[0]
    }

    /// `emit(_:key:actorId:imported:)` for each of `events`, in order, in two statements
    /// however many there are (the scheduler publishes a hundred posts at once).
    @discardableResult
    public func emit(_ events: [(data: EventData, key: String)], actorId: String?, imported: Bool = false) async throws -> [Event] {
        let keys = events.map { SequenceKey(topic: $0.data.type.topic.rawValue, key: $0.key) }
        var counts: [SequenceKey: Int] = [:]
        for key in keys { counts[key, default: 0] += 1 }
        let locked = counts.keys.sorted()
        let rows = try await connection.query(
            """
            INSERT INTO event_sequences (topic, key, sequence)
            SELECT k.topic, k.key, k.count FROM unnest(\(locked.map(\.topic))::text[], \(locked.map(\.key))::text[], \(locked.map { counts[$0]! })::bigint[])
                AS k(topic, key, count)
            ON CONFLICT (topic, key) DO UPDATE SET sequence = event_sequences.sequence + EXCLUDED.sequence
            RETURNING topic, key, sequence, pg_current_xact_id()::text AS transaction_id
            """)
        // What settles the write if its COMMIT's answer is lost: its id, and as the evidence of
        // its commit the key's sequence at least as far as it took it (short of that, another
        // write of the same key must have committed meanwhile, under our id given out again).
        if let first = rows.first {
            let topic: String = try first.decode("topic"), key: String = try first.decode("key")
            let sequence = try first.decode("sequence", as: Int64.self)
            connection.noteTransactionId(
                try first.decode("transaction_id"),
                evidence: """
                    SELECT EXISTS (SELECT 1 FROM event_sequences WHERE topic = \(topic) AND key = \(key) AND sequence >= \(sequence))::text
                        AS present
                    """)
        }
        // Each key's events take its new numbers in order, up to the last returned.
        var next: [SequenceKey: Int64] = [:]
        for row in rows {
            let key = SequenceKey(topic: try row.decode("topic"), key: try row.decode("key"))
            next[key] = try row.decode("sequence", as: Int64.self) - Int64(counts[key] ?? 0) + 1
        }
        var emitted: [Event] = []
        for (event, key) in zip(events, keys) {
            guard let sequence = next[key] else { throw DatabaseError.decoding(column: "sequence", reason: "no row returned for \(key.key)") }
            next[key] = sequence + 1
            emitted.append(Event(
                producer: producer, key: key.key, sequence: sequence, actorId: actorId, traceparent: EventTraceContext.current,
                imported: imported, data: event.data))
        }
        try await Outbox.add(emitted, in: connection)
        return emitted
    }

    /// Locks the sequence row of aggregate `key` on `topic` without taking a number, for a
    /// change that must be ordered against the key's events before it knows whether it emits.
    public func lockSequence(of key: String, on topic: Topic) async throws {
        try await connection.execute(
            """
            INSERT INTO event_sequences (topic, key, sequence) VALUES (\(topic.rawValue), \(key), 0)
            ON CONFLICT (topic, key) DO UPDATE SET sequence = event_sequences.sequence
            """)
    }
}
