import Foundation
import PostlyModels
import PostlyPostgres

/// The transactional outbox: a service writes its change and the event in one database
/// transaction; `OutboxRelay` publishes the event afterwards. When Kafka is down, writes
/// still succeed and events wait here.
public enum Outbox {
    /// The commit signal the relay waits for; a commit with new events wakes it at once.
    static let channel = "postly_outbox"

    /// The tables of the outbox and of the consumers' applied sequences; every service that
    /// publishes or consumes events has them, as one of its migrations.
    public static let migration = Migration(
        version: 1, name: "events",
        sql: """
            CREATE TABLE outbox (
                id bigserial PRIMARY KEY,
                event_id uuid NOT NULL UNIQUE,
                topic text NOT NULL,
                key text NOT NULL,
                payload bytea NOT NULL,
                created_at timestamptz NOT NULL DEFAULT now(),
                sent_at timestamptz
            );
            CREATE INDEX outbox_pending ON outbox (id) WHERE sent_at IS NULL;
            CREATE TABLE consumed_sequences (
                consumer text NOT NULL,
                topic text NOT NULL,
                key text NOT NULL,
                sequence bigint NOT NULL,
                PRIMARY KEY (consumer, topic, key)
            );
            """)

    /// Adds `events` inside the caller's transaction, in order, in one statement: they are
    /// published if and only if the transaction commits.
    public static func add(_ events: [Event], in connection: DatabaseConnection) async throws {
        guard !events.isEmpty else { return }
        // Each payload as text (JSON is UTF-8 without a NUL), made bytes again by the statement.
        let payloads = try events.map { String(decoding: try PostlyJSON.encode($0), as: UTF8.self) }
        try await connection.executeLater(
            """
            INSERT INTO outbox (event_id, topic, key, payload)
            SELECT e.id, e.topic, e.key, convert_to(e.payload, 'UTF8')
            FROM unnest(\(events.map(\.id))::uuid[], \(events.map(\.topic.rawValue))::text[], \(events.map(\.key))::text[], \(payloads)::text[])
                WITH ORDINALITY AS e(id, topic, key, payload, position)
            ORDER BY e.position
            """)
        // This process's relay publishes them as soon as the transaction commits.
        connection.signalAfterCommit(channel)
    }
}
