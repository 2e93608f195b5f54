import Foundation
import Logging
import PostlyModels
import PostlyPostgres
import ServiceLifecycle

/// The one way a service writes a change. One call runs, in one database transaction:
/// the `Idempotency-Key` lookup (a retry answers the stored first answer), the caller's
/// change, the aggregate's next event `sequence` and the outbox append (through
/// `WriteTransaction.emit`), the record of the answer, and the commit. A transient database
/// error (deadlock, serialization failure, connection lost before the commit) runs the whole
/// transaction again, up to `maximumAttempts` times; after that the error is thrown, and the
/// problem middleware answers it with 503 and `Retry-After`.
///
/// As a `Service` it purges answers older than `IdempotencyKey.lifetime` every 10 minutes.
public struct WriteUnit: Service {
    /// Tells the time; tests move it to expire idempotency keys and to make scheduled posts due.
    public typealias Clock = @Sendable () -> Date

    /// The tables of the write unit, one migration of every service that writes: each
    /// aggregate's last event sequence, and the stored first answers of idempotent requests.
    public static func migration(version: Int) -> Migration {
        Migration(
            version: version, name: "write unit",
            sql: """
                CREATE TABLE event_sequences (
                    topic text NOT NULL,
                    key text NOT NULL,
                    sequence bigint NOT NULL,
                    PRIMARY KEY (topic, key)
                );
                CREATE TABLE idempotency_answers (
                    user_id text NOT NULL,
                    key text NOT NULL,
                    -- SHA-256 of method, path, user and body: a retry must repeat all of them.
                    fingerprint bytea NOT NULL,
                    status integer NOT NULL,
                    headers text NOT NULL,
                    body bytea NOT NULL,
                    created_at timestamptz NOT NULL,
                    PRIMARY KEY (user_id, key)
                );
                CREATE INDEX idempotency_answers_age ON idempotency_answers (created_at);
                """)
    }

    /// How long a retry waits for a first request with its key that is still running.
    static let idempotencyWait = Duration.seconds(2)

    let database: Database
    let producer: String
    let clock: Clock
    let maximumAttempts: Int
    let logger: Logger

    /// - Parameters:
    ///   - producer: the service's name, written into every event it emits.
    ///   - maximumAttempts: how often a transaction runs before a transient error is thrown.
    public init(database: Database, producer: String, clock: @escaping Clock = { Date() }, maximumAttempts: Int = 4, logger: Logger) {
        self.database = database
        self.producer = producer
        self.clock = clock
        self.maximumAttempts = max(1, maximumAttempts)
        self.logger = logger
    }

    /// The write unit's clock now (`WriteTransaction.now` inside a write).
    public var now: Date { clock() }

    /// Runs `change` in one transaction, again after a transient error; returns its value.
    public func write<T: Sendable>(_ change: (WriteTransaction) async throws -> T) async throws -> T {
        try await database.retryingTransaction(attempts: maximumAttempts) { connection in
            try await change(WriteTransaction(connection: connection, producer: producer, now: clock()))
        }
    }

    /// Runs `change` at most once per idempotency key: the first answer is stored with the
    /// change and handed back again, byte for byte, to every retry within the key's lifetime,
    /// whatever happened to the resource since. Without a key, it is `write(_:)`.
    /// Throws `IdempotencyError.keyReused` when the key came with another request, and
    /// `.inProgress` when the first request with the key is still running after a short wait.
    public func write(idempotency key: IdempotencyKey?, _ change: (WriteTransaction) async throws -> StoredAnswer) async throws -> StoredAnswer {
        guard let key else { return try await write(change) }
        return try await database.retryingTransaction(attempts: maximumAttempts) { connection in
            // Held to the commit. A concurrent retry waits a moment for the first to finish and
            // then replays its answer; when the first takes longer, the retry answers 409.
            do {
                try await connection.execute(
                    """
                    SELECT set_config('lock_timeout', \(String(Self.idempotencyWait.milliseconds)), true),
                           pg_advisory_xact_lock(hashtextextended(\(key.userId + "\n" + key.key), 0))
                    """)
            } catch DatabaseError.lockNotAvailable {
                throw IdempotencyError.inProgress
            }
            try await connection.execute("SELECT set_config('lock_timeout', '0', true)")
            let now = clock()
            if let stored = try await Self.storedAnswer(for: key, now: now, in: connection) { return stored }
            let answer = try await change(WriteTransaction(connection: connection, producer: producer, now: now))
            // An expired answer of the same key (not purged yet) is replaced.
            try await connection.executeLater(
                """
                INSERT INTO idempotency_answers (user_id, key, fingerprint, status, headers, body, created_at)
                VALUES (\(key.userId), \(key.key), sha256(\(key.fingerprint)), \(answer.status), \(try answer.encodedHeaders()),
                        \(answer.body), \(now))
                ON CONFLICT (user_id, key) DO UPDATE
                SET fingerprint = EXCLUDED.fingerprint, status = EXCLUDED.status, headers = EXCLUDED.headers,
                    body = EXCLUDED.body, created_at = EXCLUDED.created_at
                """)
            return answer
        }
    }

    /// The stored first answer for `key`, nil when there is none (yet); throws
    /// `IdempotencyError.keyReused` when the key came with another request. A quick look
    /// without locks, for a route that must ask elsewhere before it writes: a retry is
    /// answered without asking. `write(idempotency:)` looks again under the key's lock.
    public func storedAnswer(for key: IdempotencyKey) async throws -> StoredAnswer? {
        try await database.withConnection { try await Self.storedAnswer(for: key, now: clock(), in: $0) }
    }

    /// A write transaction on the connection of a transaction that is already open: for an
    /// event handler that emits events while it applies one, inside the runner's transaction.
    public func joining(_ connection: DatabaseConnection) -> WriteTransaction {
        WriteTransaction(connection: connection, producer: producer, now: clock())
    }

    private static func storedAnswer(for key: IdempotencyKey, now: Date, in connection: DatabaseConnection) async throws -> StoredAnswer? {
        guard let stored = try await connection.query(
            """
            SELECT fingerprint = sha256(\(key.fingerprint)) AS same_request, status, headers, body FROM idempotency_answers
            WHERE user_id = \(key.userId) AND key = \(key.key) AND created_at > \(now.addingTimeInterval(-IdempotencyKey.lifetime))
            """
        ).first else { return nil }
        guard try stored.decode("same_request", as: Bool.self) else { throw IdempotencyError.keyReused }
        return StoredAnswer(
            status: try stored.decode("status"), headers: try StoredAnswer.decodeHeaders(stored.decode("headers")),
            body: try stored.decode("body"))
    }

    /// Deletes the answers older than their lifetime, `chunk` a statement (the backlog of a
    /// long outage in one statement could pass the statement timeout every time, and the
    /// table never shrank); returns how many. The age is checked again on the row deleted: a
    /// key used again meanwhile holds a new answer.
    @discardableResult
    public func purgeExpiredAnswers(chunk: Int = 10_000) async throws -> Int {
        let cutoff = clock().addingTimeInterval(-IdempotencyKey.lifetime)
        var purged = 0
        while true {
            let deleted = try await database.execute(
                """
                DELETE FROM idempotency_answers WHERE created_at <= \(cutoff) AND (user_id, key) IN (
                    SELECT user_id, key FROM idempotency_answers WHERE created_at <= \(cutoff) ORDER BY created_at LIMIT \(chunk))
                """)
            purged += deleted
            if deleted < chunk { return purged }
        }
    }

    public func run() async throws {
        while !Task.isShuttingDownGracefully, !Task.isCancelled {
            do {
                try await purgeExpiredAnswers()
            } catch {
                logger.warning("cannot purge expired idempotency keys", metadata: ["error": "\(error)"])
            }
            await sleepUnlessShuttingDown(for: .seconds(600))
        }
    }
}

extension Duration {
    /// Whole milliseconds, as PostgreSQL's timeouts take them.
    var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
