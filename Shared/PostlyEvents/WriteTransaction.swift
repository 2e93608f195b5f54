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
        let topic = data.type.topic.rawValue
        let rows = try await connection.query(
            """
            INSERT INTO event_sequences (topic, key, sequence) VALUES (\(topic), \(key), 1)
            ON CONFLICT (topic, key) DO UPDATE SET sequence = event_sequences.sequence + 1
            RETURNING sequence
            """)
        guard let sequence = try rows.first?.decode("sequence", as: Int64.self) else {
            throw DatabaseError.decoding(column: "sequence", reason: "no row returned")
        }
        let event = Event(
            producer: producer, key: key, sequence: sequence, actorId: actorId, traceparent: EventTraceContext.current, imported: imported,
            data: data)
        try await Outbox.add(event, in: connection)
        return event
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
