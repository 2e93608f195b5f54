import Foundation
import Testing
import TestSupport

@testable import PostsService

/// The posts service's routing table is its OpenAPI document: the same routes, and a token
/// asked for exactly where the document says so. Built without a database.
@Suite struct RoutingTests {
    @Test func everyRouteIsDocumentedAndAsksForATokenWhereDocumented() async throws {
        let kit = try RouteTable.offlineKit("posts")
        let repository = PostgresPostRepository(database: kit.database)
        let model = ReadModel(database: kit.database, capacityBytes: 1 << 20)
        let router = buildRouter(
            kit, repository: repository, views: ViewCounter(repository: repository, interval: .seconds(1), logger: kit.logger),
            changes: ChangeWatch(feed: ChangeFeed(database: kit.database, logger: kit.logger), model: model, logger: kit.logger), feeds: FeedCache(),
            feedSite: PostsConfiguration(environment: [:]).feedSite)
        let disagreements = try await RouteTable.disagreements(router, document: openAPI)
        #expect(disagreements == [])
    }
}
