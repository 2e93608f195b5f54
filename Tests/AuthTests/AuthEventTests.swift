import AuthService
import Foundation
import PostlyKafka
import PostlyModels
import Testing
import TestSupport

/// The events on `postly.users`, read from a broker of the test's own.
@Suite struct AuthEventTests {
    @Test func registerGoogleLinkAndLogoutPublishUserEventsInSequence() async throws {
        let broker = try await TestBroker.start()
        defer { broker.stop() }
        try await LocalOpenIDIssuer.run { issuer async throws in
            try await AuthTestHarness.run(brokers: broker.brokers, google: issuer) { auth async throws in
                let session = try await auth.registered(name: "Ada Lovelace", email: "ada@example.com")
                let picture = "https://images.example.test/ada.png"
                // Linking revokes the password's session; then Ada logs out of Google's.
                let google = try await auth.loginWithGoogle(try await issuer.idToken(email: "ada@example.com", picture: picture)).session()
                #expect(try await auth.post("/api/auth/logout", json: nil, token: google.accessToken).status == .ok)
                let sessionIds = try [session, google].map { try #require(AuthContractTests.claims(of: $0.accessToken)["sid"] as? String) }

                let kafka = try testConfiguration(brokers: broker.brokers)
                let consumer = try KafkaConsumer(
                    configuration: kafka, groupID: uniqueName("auth-events"), topics: [Topic.users.rawValue], logger: testLogger)
                let messages = try await withRunning([consumer]) { try await receive(4, from: consumer) }
                let events = try messages.map { try PostlyJSON.decoder().decode(Event.self, from: Data($0.value)) }
                    .sorted { $0.sequence < $1.sequence }
                let userId = session.user.userId

                #expect(events.map(\.type) == [.userRegistered, .sessionRevoked, .userUpdated, .sessionRevoked])
                #expect(events.map(\.sequence) == [1, 2, 3, 4], "one counter per user, across user.* and session.revoked")
                #expect(events.allSatisfy { $0.key == userId && $0.producer == "auth" })
                #expect(messages.allSatisfy { $0.key == userId }, "the Kafka key is the user id")
                #expect(events[0].data == .userRegistered(UserSnapshot(userId: userId, name: "Ada Lovelace", profilePicture: nil)))
                #expect(events[2].data == .userUpdated(UserSnapshot(userId: userId, name: "Ada Lovelace", profilePicture: picture)))
                for (event, sessionId) in zip([events[1], events[3]], sessionIds) {
                    guard case .sessionRevoked(let revocation) = event.data else {
                        Issue.record("not a revocation: \(event.data)")
                        continue
                    }
                    #expect(revocation.sessionId == sessionId)
                    #expect(revocation.userId == userId)
                    #expect(revocation.expiresAt > Date())
                }

                // Shaped like the shared samples, and never carrying the email.
                for message in messages {
                    let object = try #require(JSONSerialization.jsonObject(with: Data(message.value)) as? [String: Any])
                    let type = try #require(EventType(rawValue: object["type"] as? String ?? ""))
                    let sample = try #require(JSONSerialization.jsonObject(with: EventFixtures.data(type)) as? [String: Any])
                    #expect(Set(object.keys) == Set(sample.keys), "\(type)")
                    let data = try #require(object["data"] as? [String: Any])
                    let sampleData = try #require(sample["data"] as? [String: Any])
                    #expect(Set(data.keys) == Set(sampleData.keys), "\(type)")
                    #expect(!String(decoding: message.value, as: UTF8.self).contains("ada@example.com"))
                }
            }
        }
    }
}
