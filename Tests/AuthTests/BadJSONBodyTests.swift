import Foundation
import HTTPTypes
import NIOCore
import Testing
import TestSupport

/// The shared table of bad bodies against every JSON route of the auth service.
@Suite struct BadJSONBodyTests {
    @Test func everyJSONRouteAnswers400AndCreatesNothing() async throws {
        try await AuthTestHarness.run { auth async throws in
            for route in ["/api/auth/register", "/api/auth/login/email", "/api/auth/login", "/api/auth/refresh"] {
                for bad in BadJSONBodies.all {
                    let response = try await auth.client.execute(
                        uri: route, method: .post, headers: [.contentType: "application/json"], body: ByteBuffer(bytes: bad.bytes))
                    #expect(response.status == .badRequest, "\(route): \(bad.problem)")
                    #expect(response.headers[.contentType] == "application/problem+json", "\(route): \(bad.problem)")
                }
            }
            let users = try await auth.database.query("SELECT count(*) AS n FROM users")
            #expect(try users[0].decode("n", as: Int64.self) == 0)
        }
    }
}
