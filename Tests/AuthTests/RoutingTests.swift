import Foundation
import Testing
import TestSupport

@testable import AuthService

/// The auth service's routing table is its OpenAPI document: the same routes, and a token
/// asked for exactly where the document says so. Built without a database.
@Suite struct RoutingTests {
    @Test func everyRouteIsDocumentedAndAsksForATokenWhereDocumented() async throws {
        let kit = try RouteTable.offlineKit("auth")
        let configuration = AuthConfiguration(environment: [:])
        let signer = AccessTokenSigner(repository: PostgresSigningKeyRepository(database: kit.database), issuer: "postly-auth", lifetime: 900)
        let router = buildRouter(kit, configuration, signer: signer)
        let disagreements = try await RouteTable.disagreements(router, document: openAPI)
        #expect(disagreements == [])
    }
}
