import Foundation
import Testing
import TestSupport

@testable import NotificationsService

/// The notifications service's routing table is its OpenAPI document: the same routes, and a token
/// asked for exactly where the document says so. Built without a database.
@Suite struct RoutingTests {
    @Test func everyRouteIsDocumentedAndAsksForATokenWhereDocumented() async throws {
        let kit = try RouteTable.offlineKit("notifications")
        let configuration = NotificationsConfiguration(environment: [:])
        let repository = PostgresNotificationRepository(database: kit.database)
        let openStreams = OpenStreams(database: kit.database, streamsPerUser: configuration.streamsPerUser, staleAfter: .seconds(30))
        let hub = NotificationHub(
            database: kit.database, repository: repository, openStreams: openStreams, denyList: kit.denyList,
            heartbeatInterval: configuration.heartbeatInterval, streamCapacity: configuration.streamCapacity, logger: kit.logger)
        let router = buildRouter(kit, configuration, repository: repository, hub: hub)
        let disagreements = try await RouteTable.disagreements(router, document: openAPI)
        #expect(disagreements == [])
    }
}
