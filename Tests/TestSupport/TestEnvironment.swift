import Foundation

/// Where the PostgreSQL and the broker that `deploy/test.sh` started are listening.
/// Tests read it here and nowhere else.
public enum TestEnvironment {
    public struct Missing: Error, CustomStringConvertible {
        public let variable: String
        public var description: String { "\(variable) is not set: run the tests through deploy/test.sh" }
    }

    static func value(_ name: String) throws -> String {
        guard let value = ProcessInfo.processInfo.environment[name], !value.isEmpty else { throw Missing(variable: name) }
        return value
    }

    public static var postgresHost: String { get throws { try value("POSTLY_TEST_POSTGRES_HOST") } }
    public static var postgresPort: Int { get throws { Int(try value("POSTLY_TEST_POSTGRES_PORT")) ?? 5432 } }
    public static var postgresUser: String { get throws { try value("POSTLY_TEST_POSTGRES_USER") } }
    /// `host:port` of the shared broker.
    public static var kafkaBrokers: String { get throws { try value("POSTLY_TEST_KAFKA_BROKERS") } }
    /// PostgreSQL's server binaries, for tests that run and restart a server of their own.
    public static var postgresBinaries: String { get throws { try value("POSTLY_TEST_PG_BIN") } }
    /// The tansu binary, for tests that stop and start a broker of their own.
    public static var tansuBinary: String { get throws { try value("POSTLY_TEST_TANSU") } }
}
