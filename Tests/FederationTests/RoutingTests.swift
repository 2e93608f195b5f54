import Foundation
import Testing
import TestSupport

@testable import FederationService

/// The federation service's routing table is its OpenAPI document: the same routes, and a
/// signature (documented as the `httpSignature` scheme) asked for exactly where the document
/// says so. Built without a database.
@Suite struct RoutingTests {
    @Test func everyRouteIsDocumentedAndAsksForASignatureWhereDocumented() async throws {
        let kit = try RouteTable.offlineKit("federation")
        let router = buildRouter(kit, FederationParts(kit, FederationConfiguration(environment: [:])))
        let disagreements = try await RouteTable.disagreements(router, document: openAPI)
        #expect(disagreements == [])
    }
}
