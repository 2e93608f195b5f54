import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import PostlyKafka
import PostlyModels
import PostlyPostgres
import PostlyService
import Testing
import TestSupport

/// Logout on the auth service reaches every service through `session.revoked` events, and
/// every service keeps what it heard across restarts.
@Suite struct SessionRevocationTests {
    func publishRevocation(of sessionId: String, by producer: KafkaProducer) async throws {
        let event = Event(
            producer: "auth", key: "user-1", sequence: 1, actorId: "user-1",
            data: .sessionRevoked(SessionRevocation(sessionId: sessionId, userId: "user-1", expiresAt: Date().addingTimeInterval(3600))))
        _ = try await producer.send(
            KafkaOutgoingMessage(topic: Topic.users.rawValue, key: event.key, value: Array(PostlyJSON.encoder().encode(event))))
    }

    func refused(_ token: String, by verifier: AccessTokenVerifier) async -> Bool {
        do {
            _ = try await verifier.verify(token)
            return false
        } catch {
            return true
        }
    }

    @Test func aRevokedSessionsTokensAreRefusedWithinASecond() async throws {
        let broker = try await TestBroker.start()
        defer { broker.stop() }
        let database = try await TestDatabase.create()
        try await Migrations([RevokedSessions.migration]).apply(to: database.database)
        let kafka = try testConfiguration(brokers: broker.brokers)
        try await KafkaTopics.create([Topic.users.rawValue], configuration: kafka)
        let issuer = try await TestTokenIssuer()
        let denyList = SessionDenyList()
        let verifier = AccessTokenVerifier(configuration: .init(), denyList: denyList, logger: testLogger) { issuer.jwks }
        let listener = SessionRevocationListener(
            kafka: kafka, serviceName: "test", denyList: denyList, store: RevokedSessions(database: database.database), logger: testLogger)
        let producer = try KafkaProducer(configuration: kafka, logger: testLogger)
        let first = try await issuer.token(sessionId: "first")
        let second = try await issuer.token(sessionId: "second")

        try await withRunning([producer, listener]) {
            #expect(await !refused(first, by: verifier))
            // The first revocation also waits out the listener joining its group.
            try await publishRevocation(of: "first", by: producer)
            let deadline = ContinuousClock.now + .seconds(20)
            while await !refused(first, by: verifier), ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(await refused(first, by: verifier))
            #expect(await !refused(second, by: verifier))

            let published = ContinuousClock.now
            try await publishRevocation(of: "second", by: producer)
            while await !refused(second, by: verifier), published.duration(to: .now) < .seconds(5) {
                try await Task.sleep(for: .milliseconds(10))
            }
            let delay = published.duration(to: .now)
            #expect(delay < .seconds(1), "revocation to refusal took \(delay)")
        }
        await database.drop()
    }

    /// A service on the kit whose one route needs a caller, on `database` and `brokers`.
    static func service(database: TestDatabase, brokers: String, issuer: TestTokenIssuer) throws -> some ApplicationProtocol {
        var configuration = ServiceConfiguration(name: "revocation-test", defaultPort: 0, environment: [:])
        configuration.postgres = database.configuration
        configuration.kafka = try testConfiguration(brokers: brokers)
        let jwks = issuer.jwks
        let kit = try ServiceKit(configuration, schema: Migrations([]), logger: testLogger, options: .init(fetchJWKS: { jwks }))
        let router = kit.makeRouter(openAPI: OpenAPIDocument(#"{"openapi": "3.1.0"}"#))
        router.authenticated("api/me").get { _, context in context.identity.userId }
        return kit.application(router: router)
    }

    static func status(of token: String, _ client: any TestClientProtocol) async throws -> HTTPResponse.Status {
        try await client.execute(uri: "/api/me", method: .get, headers: [.authorization: "Bearer \(token)"], body: nil).status
    }

    /// The issue's attack: log out, restart the service against a broker that kept nothing
    /// (tansu after a restart), and try the old token.
    @Test func aSessionRevokedBeforeARestartStaysRefusedWithAnEmptyBroker() async throws {
        let broker = try await TestBroker.start()
        defer { broker.stop() }
        let database = try await TestDatabase.create()
        let issuer = try await TestTokenIssuer()
        let loggedOut = try await issuer.token(sessionId: "logged-out")
        let other = try await issuer.token(sessionId: "still-signed-in")

        try await Self.service(database: database, brokers: broker.brokers, issuer: issuer).test(.router) { client async throws in
            #expect(try await Self.status(of: loggedOut, client) == .ok)
            let producer = try KafkaProducer(configuration: try testConfiguration(brokers: broker.brokers), logger: testLogger)
            try await withRunning([producer]) { try await publishRevocation(of: "logged-out", by: producer) }
            let refused = try await eventually { try await Self.status(of: loggedOut, client) == .unauthorized }
            #expect(refused, "the revocation arrived through the broker")
        }

        broker.stop()
        try await broker.start()
        try await Self.service(database: database, brokers: broker.brokers, issuer: issuer).test(.router) { client async throws in
            #expect(try await Self.status(of: loggedOut, client) == .unauthorized, "refused from the first request on")
            #expect(try await Self.status(of: other, client) == .ok)
        }
        await database.drop()
    }

    @Test func storedRevocationsArePrunedOnceTheirTokensHaveExpired() async throws {
        try await TestDatabase.with { database in
            try await Migrations([RevokedSessions.migration]).apply(to: database)
            let store = RevokedSessions(database: database)
            try await store.record(SessionRevocation(sessionId: "expired", userId: "u", expiresAt: Date().addingTimeInterval(-1)))
            try await store.record(SessionRevocation(sessionId: "live", userId: "u", expiresAt: Date().addingTimeInterval(60)))
            // A second, earlier expiry of the same session never shortens it.
            try await store.record(SessionRevocation(sessionId: "live", userId: "u", expiresAt: Date().addingTimeInterval(1)))
            let denyList = SessionDenyList()
            #expect(try await store.load(into: denyList) == 1)
            #expect(denyList.isRevoked("live", now: Date().addingTimeInterval(30)))
            #expect(try await database.query("SELECT session_id FROM revoked_sessions").count == 1)
        }
    }

    @Test func aRevocationIsForgottenOnceItsTokensHaveExpired() {
        let denyList = SessionDenyList()
        denyList.revoke(sessionId: "s", until: Date().addingTimeInterval(60))
        #expect(denyList.isRevoked("s"))
        #expect(!denyList.isRevoked("s", now: Date().addingTimeInterval(61)))
        #expect(denyList.count == 0)
    }

    /// Logged-out sessions are not presented again, so nothing looks them up once they expire:
    /// they are swept out as others arrive, and the past ones a start replays are not kept.
    @Test func theDenyListKeepsOnlyRevocationsThatStillRefuseSomething() {
        let denyList = SessionDenyList()
        let start = Date()
        for number in 0..<2000 {
            denyList.revoke(sessionId: "old-\(number)", until: start.addingTimeInterval(60), now: start)
        }
        denyList.revoke(sessionId: "replayed", until: start.addingTimeInterval(-1), now: start)
        #expect(!denyList.isRevoked("replayed", now: start))
        #expect(denyList.count == 2000)

        let later = start.addingTimeInterval(120)
        for number in 0..<100 {
            denyList.revoke(sessionId: "new-\(number)", until: later.addingTimeInterval(60), now: later)
        }
        #expect(denyList.count == 100)
        #expect(denyList.isRevoked("new-0", now: later))
    }
}
