import PostlyModels

/// Where a `Database` connects and how many connections it keeps.
public struct PostgresConfiguration: Sendable {
    public var host: String
    public var port: Int
    public var user: String
    public var password: Secret?
    public var database: String
    /// The most connections the pool opens; callers beyond it wait their turn. Four by default:
    /// a service's statements use the database's CPU, and on two cores ten writers at once
    /// kept every other database user (search's indexer among them) waiting for a core, for
    /// fewer writes a second, not more (bench/search-freshness.sh, in the README).
    public var poolSize: Int
    /// Seconds a connection attempt may take before it fails (libpq `connect_timeout`).
    public var connectTimeout: Int
    /// Shown in `pg_stat_activity`.
    public var applicationName: String
    /// Server settings for every connection (`-c name=value`): names and values without spaces.
    public var settings: [String: String] = [:]
    /// How long to wait for the server's next byte before giving up with
    /// `DatabaseError.timedOut`; nil (the default) waits as long as it takes. Longer than the
    /// server's own `statement_timeout`, it catches only a server frozen with its connections
    /// alive, which neither keepalives nor the server itself would end.
    public var answerTimeout: Duration?
    /// How long a caller waits for a pooled connection to come free before `timedOut`; nil
    /// (the default) waits as long as it takes.
    public var leaseTimeout: Duration?

    public init(
        host: String = "127.0.0.1",
        port: Int = 5432,
        user: String = "postgres",
        password: Secret? = nil,
        database: String = "postgres",
        poolSize: Int = 4,
        connectTimeout: Int = 3,
        applicationName: String = "postly"
    ) {
        self.host = host
        self.port = port
        self.user = user
        self.password = password
        self.database = database
        self.poolSize = poolSize
        self.connectTimeout = connectTimeout
        self.applicationName = applicationName
    }
}

extension PostgresConfiguration: CustomStringConvertible {
    /// Safe for logs: no password.
    public var description: String {
        "postgres://\(user)@\(host):\(port)/\(database) (pool \(poolSize))"
    }
}
