import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import PostlyModels
import PostlyPostgres
@testable import PostlyService
import TestSupport

/// A small service on the kit, with one route of each kind the real services have. Its
/// database and broker are never reached: readiness asks `readiness` instead.
struct TestApplication {
    struct Note: Codable, ResponseEncodable {
        var title: String
    }

    let issuer: TestTokenIssuer
    let kit: ServiceKit
    let application: Application<RouterResponder<PostlyRequestContext>>

    init(readiness: [ReadinessCheck] = [], issuer: TestTokenIssuer? = nil, fetchJWKS: AccessTokenVerifier.JWKSSource? = nil) async throws {
        let issuer = if let issuer { issuer } else { try await TestTokenIssuer() }
        self.issuer = issuer
        let logger = Logger(label: "test")
        let jwks = issuer.jwks
        kit = try ServiceKit(
            ServiceConfiguration(name: "test", defaultPort: 0, environment: [:]), schema: Migrations([]), logger: logger,
            options: .init(fetchJWKS: fetchJWKS ?? { jwks }))
        let router = kit.makeRouter(openAPI: OpenAPIDocument(#"{"openapi":"3.1.0"}"#))
        kit.readiness.check(readiness)
        router.post("api/notes") { request, context in
            try await request.decodeJSON(as: Note.self, context: context)
        }
        router.authenticated("api/me").get { _, context in
            Note(title: context.identity.userId)
        }
        router.get("api/page") { request, _ in
            let page = try request.pageRequest()
            return Note(title: "\(page.page)/\(page.limit)/\(page.offset)")
        }
        router.get("api/broken") { _, _ -> Note in
            struct SecretFailure: Error { let sql = "SELECT password FROM users" }
            throw SecretFailure()
        }
        router.get("api/busy") { _, _ -> Note in
            // What the write unit throws when a deadlock outlasts its retries.
            throw DatabaseError.deadlockDetected
        }
        router.get("api/database-error/:sqlState") { _, context -> Note in
            throw DatabaseError.server(sqlState: try context.parameters.require("sqlState"), message: "what the server said")
        }
        application = Application(router: router, services: [kit.readiness], logger: logger)
    }

    func test(_ body: @escaping @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        try await application.test(.router, body)
    }
}

extension TestResponse {
    var problem: Problem? { try? PostlyJSON.decoder().decode(Problem.self, from: Data(body.readableBytesView)) }
}
