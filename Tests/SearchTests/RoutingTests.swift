import Foundation
import Testing
import TestSupport

@testable import SearchService

/// The search service's routing table is its OpenAPI document: the same routes, and a token
/// asked for exactly where the document says so. Built without a database.
@Suite struct RoutingTests {
    @Test func everyRouteIsDocumentedAndAsksForATokenWhereDocumented() async throws {
        let kit = try RouteTable.offlineKit("search")
        let router = buildRouter(kit, index: SearchIndex(), contents: ContentCache(bytes: 1 << 20))
        let disagreements = try await RouteTable.disagreements(router, document: openAPI)
        #expect(disagreements == [])
    }
}
