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

    /// Adds `event` inside the caller's transaction: it is published if and only if the
    /// transaction commits.
    public static func add(_ event: Event, in connection: DatabaseConnection) async throws {
        let payload = try PostlyJSON.encode(event)
        try await connection.execute(
            """
            INSERT INTO outbox (event_id, topic, key, payload)
            VALUES (\(event.id), \(event.topic.rawValue), \(event.key), \(payload))
            """)
        // This process's relay publishes it as soon as the transaction commits.
        connection.signalAfterCommit(channel)
    }
}
