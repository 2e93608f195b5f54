import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import PostlyKafka
import PostlyPostgres
import PostlyService
import Synchronization

/// The one way a service's tests run it: built as `main` builds it, on a fresh database of
/// its own (dropped afterwards), against the test broker, with a test token issuer and a
/// clock the test can move, driven through its router.
///
///     try await ServiceTestHarness.run { setup in
///         var configuration = PostsConfiguration(environment: [:])
///         configuration.service.postgres = setup.postgres
///         configuration.service.kafka = setup.kafka
///         return try buildApplication(configuration, logger: testLogger, options: setup.options)
///     } _: { harness in
///         let ada = try await harness.user("Ada")
///         let answer = try await harness.request(.post, "/api/posts", as: ada, json: #"{"title":"t","content":"c"}"#)
///     }
public struct ServiceTestHarness: Sendable {
    /// What a test application is built with.
    public struct Setup: Sendable {
        /// The test database's configuration (the service's own pool).
        public var postgres: PostgresConfiguration
        public var kafka: KafkaConfiguration
        public let issuer: TestTokenIssuer
        public let clock: TestClock

        /// The issuer's key set, for `ServiceKit.Options.fetchJWKS`.
        public var fetchJWKS: @Sendable () async throws -> String {
            let jwks = issuer.jwks
            return { jwks }
        }

        /// The kit's options: the issuer's key set and the test's clock.
        public var options: ServiceKit.Options {
            ServiceKit.Options(fetchJWKS: fetchJWKS, clock: clock.now)
        }
    }

    public let client: any TestClientProtocol
    /// A second pool to the service's database, for seeding and looking behind the API.
    public let database: Database
    public let issuer: TestTokenIssuer
    public let clock: TestClock
    let test: TestDatabase

    /// Runs `body` against the application `build` makes. `brokers` names a broker of the
    /// test's own instead of the shared one; `poolSize` is the service's pool.
    public static func run<App: ApplicationProtocol>(
        brokers: String? = nil, poolSize: Int = 8,
        build: @Sendable (Setup) async throws -> App,
        afterShutdown: @Sendable (Database) async throws -> Void = { _ in },
        _ body: @escaping @Sendable (ServiceTestHarness) async throws -> Void
    ) async throws {
        let test = try await TestDatabase.create(poolSize: 2)
        do {
            var postgres = test.configuration
            postgres.poolSize = poolSize
            let setup = Setup(
                postgres: postgres, kafka: try testConfiguration(brokers: brokers), issuer: try await TestTokenIssuer(),
                clock: TestClock())
            let app = try await build(setup)
            try await app.test(.router) { client in
                try await body(ServiceTestHarness(client: client, database: test.database, issuer: setup.issuer, clock: setup.clock, test: test))
            }
            try await afterShutdown(test.database)
        } catch {
            await test.drop()
            throw error
        }
        await test.drop()
    }

    /// Runs `body` while the service's database is out of reach (`TestDatabase.whileDown`).
    public func whileTheDatabaseIsDown<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        try await test.whileDown(body)
    }

    /// A user with a valid access token.
    public func user(_ name: String = "Ada Lovelace", id: String = UUID().uuidString.lowercased()) async throws -> TestUser {
        TestUser(id: id, name: name, token: try await issuer.token(userId: id, name: name))
    }

    /// One request; `json` goes as an `application/json` body, `user` as a bearer token.
    @discardableResult
    public func request(
        _ method: HTTPRequest.Method, _ uri: String, as user: TestUser? = nil, json: String? = nil, headers extra: HTTPFields = [:]
    ) async throws -> TestAnswer {
        var headers = extra
        if let user { headers[.authorization] = "Bearer \(user.token)" }
        if json != nil, headers[.contentType] == nil { headers[.contentType] = "application/json" }
        let response = try await client.execute(uri: uri, method: method, headers: headers, body: json.map { ByteBuffer(string: $0) })
        return TestAnswer(status: response.status, headers: response.headers, body: Data(response.body.readableBytesView))
    }
}

/// A user of the tests, with a valid access token.
public struct TestUser: Sendable, Hashable {
    public var id: String
    public var name: String
    public var token: String

    public init(id: String, name: String, token: String) {
        self.id = id
        self.name = name
        self.token = token
    }

    public var authorization: HTTPFields { [.authorization: "Bearer \(token)"] }
}

/// One HTTP answer, its body kept as bytes.
public struct TestAnswer: Sendable {
    public var status: HTTPResponse.Status
    public var headers: HTTPFields
    public var body: Data

    public var text: String { String(decoding: body, as: UTF8.self) }
    public var json: [String: Any] { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:] }
}

/// A clock the test moves: `now` for the service, `advance(by:)` for the test.
public final class TestClock: Sendable {
    private let current: Mutex<Date>

    /// Starts at a whole second by default: a time PostgreSQL stores (to the microsecond)
    /// comes back exactly, so a test can expect exact waits from stored times.
    public init(_ start: Date = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))) {
        current = Mutex(start)
    }

    public var now: @Sendable () -> Date {
        { self.current.withLock { $0 } }
    }

    public func advance(by interval: TimeInterval) {
        current.withLock { $0 = $0.addingTimeInterval(interval) }
    }
}

/// A value tests share between tasks and closures (a `Mutex` cannot be captured).
public final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    public init(_ value: Value) {
        mutex = Mutex(value)
    }

    public func withLock<T: Sendable>(_ body: (inout Value) throws -> T) rethrows -> T {
        try mutex.withLock { try body(&$0) }
    }

    public var value: Value { mutex.withLock { $0 } }
}
