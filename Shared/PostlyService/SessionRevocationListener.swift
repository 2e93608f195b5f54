import Foundation
import Logging
import PostlyKafka
import PostlyModels
import ServiceLifecycle

/// Feeds the deny-list from `session.revoked` events on `postly.users`. Every instance of
/// every service needs every revocation, so each instance reads the topic from its start
/// in a consumer group of its own and never commits.
public final class SessionRevocationListener: Service {
    private let kafka: KafkaConfiguration
    private let groupID: String
    private let denyList: SessionDenyList
    private let logger: Logger

    public init(kafka: KafkaConfiguration, serviceName: String, denyList: SessionDenyList, logger: Logger) {
        self.kafka = kafka
        self.groupID = "\(serviceName)-sessions-\(UUID().uuidString.lowercased())"
        self.denyList = denyList
        self.logger = logger
    }

    public func run() async throws {
        let consumer = try KafkaConsumer(configuration: kafka, groupID: groupID, topics: [Topic.users.rawValue], logger: logger)
        let decoder = PostlyJSON.decoder()
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask { try await consumer.run() }
            for try await message in consumer.messages {
                // Other user events share the topic; anything undecodable is the
                // service's own consumers' business (they dead-letter it).
                guard let event = try? decoder.decode(Event.self, from: Data(message.value)),
                    case .sessionRevoked(let revocation) = event.data
                else { continue }
                denyList.revoke(sessionId: revocation.sessionId, until: revocation.expiresAt)
                logger.debug("session revoked", metadata: ["sessionId": "\(revocation.sessionId)"])
            }
        }
    }
}
