import Foundation
import Metrics
import Testing
import TestSupport

@testable import ImagesService

/// The images service's routing table is its OpenAPI document: the same routes, and a token
/// asked for exactly where the document says so. Built without a database.
@Suite struct RoutingTests {
    @Test func everyRouteIsDocumentedAndAsksForATokenWhereDocumented() async throws {
        let kit = try RouteTable.offlineKit("images")
        let suggestions = ImageSuggestions(
            cache: ResponseCache(maxEntries: 10, maxBytes: 1 << 20, ttl: .seconds(60)),
            budget: UpstreamBudget(hourlyLimit: 1, monthlyLimit: 1, userHourlyLimit: 1, database: kit.database), upstream: nil,
            metrics: ImagesMetrics(factory: NOOPMetricsHandler.instance), now: { Date() })
        let router = buildRouter(kit, suggestions: suggestions)
        let disagreements = try await RouteTable.disagreements(router, document: openAPI)
        #expect(disagreements == [])
    }
}
