import Foundation
import Testing
import TestSupport

@testable import CommentsService

/// The comments service's routing table is its OpenAPI document: the same routes, and a token
/// asked for exactly where the document says so. Built without a database.
@Suite struct RoutingTests {
    @Test func everyRouteIsDocumentedAndAsksForATokenWhereDocumented() async throws {
        let kit = try RouteTable.offlineKit("comments")
        let router = buildRouter(kit, CommentsConfiguration(environment: [:]))
        let disagreements = try await RouteTable.disagreements(router, document: openAPI)
        #expect(disagreements == [])
    }
}
