import Foundation
import Logging
import PostlyEvents
import PostlyKafka
import PostlyModels
import ServiceLifecycle

/// Feeds the deny-list from `session.revoked` events on `postly.users`, and keeps each
/// revocation in the service's database (`RevokedSessions`) so it outlives a restart. Every
/// instance of every service needs every revocation, so each instance reads the topic from
/// its start in a consumer group of its own and never commits.
public final class SessionRevocationListener: Service {
    private let kafka: KafkaConfiguration
    private let groupID: String
    private let denyList: SessionDenyList
    private let store: RevokedSessions
    private let logger: Logger

    public init(kafka: KafkaConfiguration, serviceName: String, denyList: SessionDenyList, store: RevokedSessions, logger: Logger) {
        self.kafka = kafka
        self.groupID = "\(serviceName)-sessions-\(UUID().uuidString.lowercased())"
        self.denyList = denyList
        self.store = store
        self.logger = logger
    }

    public func run() async throws {
        let consumer = try KafkaConsumer(configuration: kafka, groupID: groupID, topics: [Topic.users.rawValue], logger: logger)
        let decoder = PostlyJSON.decoder()
        // Refused in memory at once; stored behind, so a slow or absent database never delays it.
        let (toStore, storing) = AsyncStream.makeStream(of: SessionRevocation.self)
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask { try await consumer.run() }
            group.addTask { await self.keep(toStore) }
            defer { storing.finish() }
            for try await message in consumer.messages {
                // Other user events share the topic; anything undecodable is the
                // service's own consumers' business (they dead-letter it).
                guard let event = try? decoder.decode(Event.self, from: Data(message.value)),
                    case .sessionRevoked(let revocation) = event.data,
                    // Past ones, which the replay of the topic's history brings, refuse nothing.
                    revocation.expiresAt > Date()
                else { continue }
                denyList.revoke(sessionId: revocation.sessionId, until: revocation.expiresAt)
                storing.yield(revocation)
                logger.debug("session revoked", metadata: ["sessionId": "\(revocation.sessionId)"])
            }
        }
    }

    /// Stores each revocation, trying again every second while the database is down.
    private func keep(_ revocations: AsyncStream<SessionRevocation>) async {
        for await revocation in revocations {
            while true {
                do {
                    try await store.record(revocation)
                    break
                } catch {
                    logger.warning("could not store a session revocation; trying again", metadata: ["error": "\(error)"])
                    await sleepUnlessShuttingDown(for: .seconds(1))
                    if Task.isShuttingDownGracefully || Task.isCancelled { return }
                }
            }
        }
    }
}
