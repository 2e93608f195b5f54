import AuthService
import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import PostlyKafka
import PostlyModels
import PostlyPostgres
import PostlyService
import TestSupport

/// The real auth service on a fresh database of its own (the shared `ServiceTestHarness`),
/// with bcrypt at cost 4.
struct AuthTestHarness: Sendable {
    let harness: ServiceTestHarness
    var client: any TestClientProtocol { harness.client }
    /// The service's database, for checking what is stored.
    var database: Database { harness.database }

    static func run(
        brokers: String? = nil, google: LocalOpenIDIssuer? = nil,
        configure: @Sendable (inout AuthConfiguration) -> Void = { _ in },
        _ body: @escaping @Sendable (AuthTestHarness) async throws -> Void
    ) async throws {
        try await ServiceTestHarness.run(brokers: brokers, poolSize: 4) { setup in
            var configuration = Self.configuration(postgres: setup.postgres, kafka: setup.kafka, google: google)
            configure(&configuration)
            return try buildApplication(configuration, logger: testLogger)
        } _: { harness in
            try await body(AuthTestHarness(harness: harness))
        }
    }

    /// The tests' configuration: the given database and broker, bcrypt at cost 4, and the
    /// local issuer as Google when there is one.
    static func configuration(postgres: PostgresConfiguration, kafka: KafkaConfiguration, google: LocalOpenIDIssuer? = nil) -> AuthConfiguration {
        var configuration = AuthConfiguration(environment: [:])
        configuration.service.postgres = postgres
        configuration.service.kafka = kafka
        configuration.bcryptCost = 4
        if let google {
            configuration.google = .init(
                issuer: LocalOpenIDIssuer.issuer, jwksURL: google.jwksURL, clientIds: ["another-client", LocalOpenIDIssuer.clientId])
        }
        return configuration
    }

    // MARK: - Requests

    func post(_ uri: String, json: String?, token: String? = nil, headers: HTTPFields = [:]) async throws -> TestResponse {
        var headers = headers
        headers[.contentType] = "application/json"
        if let token { headers[.authorization] = "Bearer \(token)" }
        return try await client.execute(uri: uri, method: .post, headers: headers, body: json.map { ByteBuffer(string: $0) })
    }

    func get(_ uri: String, token: String? = nil) async throws -> TestResponse {
        var headers: HTTPFields = [:]
        if let token { headers[.authorization] = "Bearer \(token)" }
        return try await client.execute(uri: uri, method: .get, headers: headers, body: nil)
    }

    static func json(_ object: [String: Any]) -> String {
        String(decoding: try! JSONSerialization.data(withJSONObject: object), as: UTF8.self)
    }

    func register(name: String = "Ada Lovelace", email: String, password: String = "correct horse") async throws -> TestResponse {
        try await post("/api/auth/register", json: Self.json(["name": name, "email": email, "password": password]))
    }

    func loginWithEmail(_ email: String, password: String, headers: HTTPFields = [:]) async throws -> TestResponse {
        try await post("/api/auth/login/email", json: Self.json(["email": email, "password": password]), headers: headers)
    }

    func loginWithGoogle(_ token: String) async throws -> TestResponse {
        try await post("/api/auth/login", json: Self.json(["token": token]))
    }

    func refresh(_ refreshToken: String) async throws -> TestResponse {
        try await post("/api/auth/refresh", json: Self.json(["refreshToken": refreshToken]))
    }

    func check(_ token: String) async throws -> TestResponse {
        try await get("/api/auth/check", token: token)
    }

    /// Registers and returns the session, or fails the test.
    func registered(name: String = "Ada Lovelace", email: String = "ada-\(UUID().uuidString.prefix(8))@example.com", password: String = "correct horse") async throws -> AuthSession {
        let response = try await register(name: name, email: email, password: password)
        guard response.status == .created else { throw UnexpectedStatus(status: response.status.code, body: String(buffer: response.body)) }
        return try response.session()
    }
}

struct UnexpectedStatus: Error, CustomStringConvertible {
    let status: Int
    let body: String
    var description: String { "unexpected status \(status): \(body)" }
}

extension TestResponse {
    /// Decoded the way the iOS app decodes: strict keys, timestamps with milliseconds.
    func session() throws -> AuthSession {
        try PostlyJSON.decoder().decode(AuthSession.self, from: Data(body.readableBytesView))
    }

    func user() throws -> User {
        try PostlyJSON.decoder().decode(User.self, from: Data(body.readableBytesView))
    }

    func problem() throws -> Problem {
        try PostlyJSON.decoder().decode(Problem.self, from: Data(body.readableBytesView))
    }

    /// The body as a JSON object, for checking raw keys.
    func object() throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any] ?? [:]
    }
}
