import Foundation
import Logging
import PostlyKafka
import PostlyModels
import PostlyService
import Testing
import TestSupport

/// Logout on the auth service reaches every service through `session.revoked` events.
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
        let kafka = try testConfiguration(brokers: broker.brokers)
        try await KafkaTopics.create([Topic.users.rawValue], configuration: kafka)
        let issuer = try await TestTokenIssuer()
        let denyList = SessionDenyList()
        let verifier = AccessTokenVerifier(configuration: .init(), denyList: denyList, logger: testLogger) { issuer.jwks }
        let listener = SessionRevocationListener(kafka: kafka, serviceName: "test", denyList: denyList, logger: testLogger)
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
    }

    @Test func aRevocationIsForgottenOnceItsTokensHaveExpired() {
        let denyList = SessionDenyList()
        denyList.revoke(sessionId: "s", until: Date().addingTimeInterval(60))
        #expect(denyList.isRevoked("s"))
        #expect(!denyList.isRevoked("s", now: Date().addingTimeInterval(61)))
        #expect(denyList.count == 0)
    }
}
