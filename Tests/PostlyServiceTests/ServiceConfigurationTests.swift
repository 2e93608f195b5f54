import PostlyModels
import PostlyService
import Testing
import TestSupport

/// Every service reads its environment the same way: unset or empty takes the local default.
@Suite struct ServiceConfigurationTests {
    @Test func postgresConfigurationReadsTheEnvironmentWithLocalDefaults() {
        let defaults = ServiceConfiguration(name: "posts", defaultPort: 8082, environment: [:]).postgres
        #expect(defaults.host == "127.0.0.1")
        #expect(defaults.port == 5432)
        #expect(defaults.user == "postgres")
        #expect(defaults.password == nil)
        #expect(defaults.database == "postly_posts")
        #expect(defaults.poolSize == 4)
        let set = ServiceConfiguration(name: "posts", defaultPort: 8082, environment: [
            "POSTGRES_HOST": "db", "POSTGRES_PORT": "6543", "POSTGRES_USER": "posts", "POSTGRES_PASSWORD": "pw",
            "POSTGRES_DATABASE": "posts", "POSTGRES_POOL_SIZE": "3",
        ]).postgres
        #expect(set.host == "db" && set.port == 6543 && set.user == "posts" && set.password?.value == "pw")
        #expect(set.database == "posts" && set.poolSize == 3)
        #expect(!set.description.contains("pw"))
    }

    /// However a configuration reaches a log (interpolated, printed, dumped), its secrets do not.
    @Test func aPrintedConfigurationShowsNoSecret() {
        let configuration = ServiceConfiguration(name: "posts", defaultPort: 8082, environment: [
            "POSTGRES_PASSWORD": "pg-password-value", "POSTLY_IMPORT_TOKEN": "import-token-value",
        ])
        #expect(configuration.postgres.password?.value == "pg-password-value")
        #expect(configuration.importToken?.value == "import-token-value")
        for printed in everyPrinting(of: configuration) {
            #expect(!printed.contains("pg-password-value") && !printed.contains("import-token-value"))
            #expect(printed.contains("<redacted>"))
        }
    }

    /// The server's own timeout, ours 5 s later for a server that answers nothing at all, and
    /// 10 s for a pooled connection, whatever the statement timeout.
    @Test func aStatementTimeoutOf30SecondsUnlessSetOrTurnedOff() {
        let timeouts = { (environment: [String: String]) in
            let postgres = ServiceConfiguration(name: "posts", defaultPort: 8082, environment: Environment(environment)).postgres
            return (postgres.settings["statement_timeout"], postgres.answerTimeout, postgres.leaseTimeout)
        }
        #expect(timeouts([:]) == ("30000", .seconds(35), .seconds(10)))
        #expect(timeouts(["POSTGRES_STATEMENT_TIMEOUT_MS": "500"]) == ("500", .milliseconds(5_500), .seconds(10)))
        #expect(timeouts(["POSTGRES_STATEMENT_TIMEOUT_MS": "0"]) == (nil, nil, .seconds(10)))
    }

    @Test func emptyAndUnparsableValuesTakeTheDefault() {
        let environment: Environment = ["PORT": "", "LOG_LEVEL": "", "KAFKA_BROKERS": "", "POSTGRES_POOL_SIZE": "many"]
        let configuration = ServiceConfiguration(name: "comments", defaultPort: 8083, environment: environment)
        #expect(configuration.port == 8083)
        #expect(configuration.logLevel == .info)
        #expect(configuration.kafka.brokers == "127.0.0.1:9092")
        #expect(configuration.postgres.poolSize == 4)
    }

    @Test func staticGroupMembershipOnlyWhenAnInstanceNameIsGiven() {
        #expect(ServiceConfiguration(name: "search", defaultPort: 8084, environment: [:]).kafka.groupInstanceID == nil)
        #expect(ServiceConfiguration(name: "search", defaultPort: 8084, environment: ["KAFKA_GROUP_INSTANCE_ID": ""]).kafka.groupInstanceID == nil)
        let named = ServiceConfiguration(name: "search", defaultPort: 8084, environment: ["KAFKA_GROUP_INSTANCE_ID": "search-7d9f4-x2k8p"])
        #expect(named.kafka.groupInstanceID == "search-7d9f4-x2k8p")
    }
}
