import Crypto
import Foundation
import PostlyEvents
import PostlyPostgres
import PostlyService

/// Limits password guesses, counted in the auth database: every instance shares the counts
/// and a restart keeps them. Each attempt is charged as a failure *before* the password is
/// checked (so a burst of guesses cannot all pass the check while the first ones are still
/// hashing) and forgiven when the password was right. Emails and addresses are kept only as
/// their SHA-256 digests, and only for the window (`Purge`).
///
/// Two limits within a sliding window: failures from one client address (across emails),
/// and failures for one email, from whatever addresses. Past either, an attempt answers 429
/// without a password check, the right password too: guesses spread over many addresses get
/// no more checks of one account than guesses from one. One exception keeps others' guesses
/// from locking the owner out: an address that signed into the account within 90 days is
/// held to its own failures at it (the email's limit, counted for it alone), and waits with
/// the others only past `knownClientsLimit` times the email's limit (only known addresses get
/// past the limit, and a shared exit the owner used must not buy unbounded guesses), so a
/// client that has not been failing can still log in from where it did before. An address
/// new to the account waits while the email is past its limit.
public struct LoginRateLimiter: Sendable {
    public struct Limits: Sendable {
        public var failuresPerEmail: Int
        public var failuresPerClient: Int
        public var window: Duration

        public init(failuresPerEmail: Int = 10, failuresPerClient: Int = 30, window: Duration = .seconds(60)) {
            self.failuresPerEmail = failuresPerEmail
            self.failuresPerClient = failuresPerClient
            self.window = window
        }
    }

    /// One attempt, charged as a failure until `forgive` says it was not one.
    public struct Charge: Sendable {
        let id: Int64
        let emailDigest: String
        let clientDigest: String
    }

    static let migration = Migration(
        version: 5, name: "login failures",
        sql: """
            CREATE TABLE login_failures (
                id bigserial PRIMARY KEY,
                email text NOT NULL,
                client text NOT NULL,
                failed_at timestamptz NOT NULL DEFAULT now()
            );
            CREATE INDEX login_failures_email ON login_failures (email, failed_at);
            CREATE INDEX login_failures_client ON login_failures (client, failed_at);
            CREATE INDEX login_failures_age ON login_failures (failed_at);
            """)

    static let digestMigration = Migration(
        version: 7, name: "login failures by digest",
        sql: """
            -- The emails and addresses tried, as SHA-256 digests (hex): the table never holds the
            -- email of someone who is no user. Unlogged: no WAL on the sign-in path; a crash
            -- forgets the counts, as a throttle may.
            DROP TABLE login_failures;
            CREATE UNLOGGED TABLE login_failures (
                id bigserial PRIMARY KEY,
                email_digest text NOT NULL,
                client_digest text NOT NULL,
                failed_at timestamptz NOT NULL DEFAULT now()
            );
            CREATE INDEX login_failures_email ON login_failures (email_digest, failed_at);
            CREATE INDEX login_failures_client ON login_failures (client_digest, failed_at);
            CREATE INDEX login_failures_age ON login_failures (failed_at);
            """)

    static let knownClientsMigration = Migration(
        version: 10, name: "addresses that signed in",
        sql: """
            -- The addresses each email signed in from (SHA-256 digests, hex), for 90 days: while
            -- others' failures hold the email past its limit, these still get their checks.
            CREATE TABLE login_known_clients (
                email_digest text NOT NULL,
                client_digest text NOT NULL,
                signed_in_at timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (email_digest, client_digest)
            );
            CREATE INDEX login_known_clients_age ON login_known_clients (signed_in_at);
            """)

    /// How long an address that signed into an account stays known to it.
    static let knownClientDays = 90
    /// Past how many times the email's limit known addresses wait too.
    static let knownClientsLimit = 3

    public let limits: Limits
    let writes: WriteUnit

    public init(limits: Limits, writes: WriteUnit) {
        self.limits = limits
        self.writes = writes
    }

    private var windowSeconds: Int { Int(limits.window.components.seconds) }

    /// Charges an attempt of `client` at `email`, or throws 429 with `Retry-After` when the
    /// address has used up its failures, or the email its own (unless the address is known to it).
    public func charge(email: String, client: String) async throws -> Charge {
        let (limits, window) = (self.limits, windowSeconds)
        let (emailDigest, clientDigest) = (Self.digest(email), Self.digest(Self.network(of: client)))
        return try await writes.write { transaction in
            let connection = transaction.connection
            // The counts of one email and one address are read and charged one attempt at a
            // time, by every instance (always in this order: no deadlock).
            try await connection.execute("SELECT pg_advisory_xact_lock(hashtextextended(\("login-email:" + emailDigest), 0))")
            try await connection.execute("SELECT pg_advisory_xact_lock(hashtextextended(\("login-client:" + clientDigest), 0))")
            try await Self.purgeExpired(window: window, in: connection)
            let counts = try await connection.query(
                """
                SELECT count(*) FILTER (WHERE client_digest = \(clientDigest)) AS by_client,
                    count(*) FILTER (WHERE email_digest = \(emailDigest)) AS by_email,
                    count(*) FILTER (WHERE email_digest = \(emailDigest) AND client_digest = \(clientDigest)) AS by_email_from_client,
                    EXISTS (
                        SELECT 1 FROM login_known_clients
                        WHERE email_digest = \(emailDigest) AND client_digest = \(clientDigest)
                            AND signed_in_at > now() - \(Self.knownClientDays) * interval '1 day'
                    ) AS known
                FROM login_failures WHERE email_digest = \(emailDigest) OR client_digest = \(clientDigest)
                """)[0]
            let refused: Failures? =
                if try counts.decode("by_client", as: Int64.self) >= limits.failuresPerClient {
                    .ofClient
                } else if try counts.decode("known", as: Bool.self) {
                    if try counts.decode("by_email_from_client", as: Int64.self) >= limits.failuresPerEmail {
                        .ofEmailFromClient
                    } else if try counts.decode("by_email", as: Int64.self) >= limits.failuresPerEmail * Self.knownClientsLimit {
                        .ofEmailFromKnownClients
                    } else {
                        nil
                    }
                } else {
                    try counts.decode("by_email", as: Int64.self) >= limits.failuresPerEmail ? .ofEmail : nil
                }
            if let refused {
                throw try await Self.refusal(
                    refused, emailDigest: emailDigest, clientDigest: clientDigest,
                    limit: refused.limit(limits), window: window, in: connection)
            }
            let charged = try await connection.query(
                "INSERT INTO login_failures (email_digest, client_digest) VALUES (\(emailDigest), \(clientDigest)) RETURNING id")
            return Charge(id: try charged[0].decode("id"), emailDigest: emailDigest, clientDigest: clientDigest)
        }
    }

    /// The password was right: this address's failures at this email are forgiven, the
    /// charge among them, and the address is known to the email from now on.
    public func forgive(_ charge: Charge) async throws {
        _ = try await writes.write { transaction in
            let connection = transaction.connection
            try await connection.execute(
                "DELETE FROM login_failures WHERE email_digest = \(charge.emailDigest) AND client_digest = \(charge.clientDigest)")
            try await connection.execute(
                """
                INSERT INTO login_known_clients (email_digest, client_digest) VALUES (\(charge.emailDigest), \(charge.clientDigest))
                ON CONFLICT (email_digest, client_digest) DO UPDATE SET signed_in_at = now()
                """)
        }
    }

    /// The attempt never got to the password (the database or the hashing queue failed): not a failure.
    public func refund(_ charge: Charge) async throws {
        _ = try await writes.write { try await $0.connection.execute("DELETE FROM login_failures WHERE id = \(charge.id)") }
    }

    /// Deletes the failures older than the window, which no count includes any more, and the
    /// addresses no longer known; how many failures.
    @discardableResult
    public func purgeExpired() async throws -> Int {
        try await writes.write { transaction in
            try await transaction.connection.execute(
                "DELETE FROM login_known_clients WHERE signed_in_at < now() - \(Self.knownClientDays) * interval '1 day'")
            return try await Self.purgeExpired(window: windowSeconds, in: transaction.connection)
        }
    }

    @discardableResult
    private static func purgeExpired(window: Int, in connection: DatabaseConnection) async throws -> Int {
        try await connection.query("DELETE FROM login_failures WHERE failed_at < now() - \(window) * interval '1 second' RETURNING 1").count
    }

    /// Whose failures an address's are: an IPv6 address's /64 (a host is commonly given a whole
    /// /64, and walking its addresses must not buy more guesses), any other address itself.
    static func network(of address: String) -> String {
        var parsed = in6_addr()
        guard inet_pton(AF_INET6, address, &parsed) == 1 else { return address }
        let bytes = withUnsafeBytes(of: &parsed) { Array($0) }
        // An IPv4 address as IPv6 (`::ffff:a.b.c.d`) is that IPv4 client, not a network of all.
        if bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF {
            return bytes[12...].map(String.init).joined(separator: ".")
        }
        return bytes.prefix(8).map { String(format: "%02x", $0) }.joined() + "::/64"
    }

    /// Lowercase hex of the SHA-256 of `value`.
    static func digest(_ value: String) -> String {
        SHA256.hash(data: Data(value.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    /// Whose failures refuse an attempt.
    private enum Failures {
        case ofClient, ofEmail, ofEmailFromClient, ofEmailFromKnownClients

        func limit(_ limits: Limits) -> Int {
            switch self {
            case .ofClient: limits.failuresPerClient
            case .ofEmail, .ofEmailFromClient: limits.failuresPerEmail
            case .ofEmailFromKnownClients: limits.failuresPerEmail * LoginRateLimiter.knownClientsLimit
            }
        }
    }

    /// 429, with the seconds until the `limit`-th newest of those failures leaves the window
    /// (then their count is below the limit again).
    private static func refusal(
        _ failures: Failures, emailDigest: String, clientDigest: String, limit: Int, window: Int, in connection: DatabaseConnection
    ) async throws -> APIError {
        let rows = switch failures {
        case .ofClient:
            try await connection.query(
                """
                SELECT failed_at, now() AS now FROM login_failures WHERE client_digest = \(clientDigest)
                ORDER BY failed_at DESC OFFSET \(limit - 1) LIMIT 1
                """)
        case .ofEmail, .ofEmailFromKnownClients:
            try await connection.query(
                """
                SELECT failed_at, now() AS now FROM login_failures WHERE email_digest = \(emailDigest)
                ORDER BY failed_at DESC OFFSET \(limit - 1) LIMIT 1
                """)
        case .ofEmailFromClient:
            try await connection.query(
                """
                SELECT failed_at, now() AS now FROM login_failures WHERE email_digest = \(emailDigest) AND client_digest = \(clientDigest)
                ORDER BY failed_at DESC OFFSET \(limit - 1) LIMIT 1
                """)
        }
        // Both times by the database's clock.
        let wait = try rows.first.map { row in
            let leaves = try row.decode("failed_at", as: Date.self).addingTimeInterval(TimeInterval(window))
            return Int64(leaves.timeIntervalSince(try row.decode("now", as: Date.self)).rounded(.up))
        } ?? Int64(window)
        return APIError.tooManyRequests(retryAfterSeconds: Int(max(1, wait)), "Too many failed logins; try again later")
    }
}
