import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import PostlyModels
import PostlyPostgres
import PostlyService
import PostsService
import TestSupport

/// A user of the tests, with a valid access token.
struct TestUser: Sendable {
    var id: String
    var name: String
    var token: String
}

/// One HTTP answer, body kept as bytes.
struct Answer: Sendable {
    var status: HTTPResponse.Status
    var headers: HTTPFields
    var body: Data

    var text: String { String(decoding: body, as: UTF8.self) }
    var json: [String: Any] { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:] }
    func post() throws -> Post { try PostlyJSON.decoder().decode(Post.self, from: body) }
    func page() throws -> PostPage { try PostlyJSON.decoder().decode(PostPage.self, from: body) }
    var problem: Problem? { try? PostlyJSON.decoder().decode(Problem.self, from: body) }
}

/// The posts service built as in production, on a fresh database, driven through its router.
struct PostsClient: Sendable {
    let client: any TestClientProtocol
    let issuer: TestTokenIssuer
    /// The test database, for looking behind the API.
    let database: Database

    func user(_ name: String = "Ada Lovelace", id: String = UUID().uuidString.lowercased()) async throws -> TestUser {
        TestUser(id: id, name: name, token: try await issuer.token(userId: id, name: name))
    }

    @discardableResult
    func request(
        _ method: HTTPRequest.Method, _ uri: String, as user: TestUser? = nil, json: String? = nil,
        headers extra: HTTPFields = [:]
    ) async throws -> Answer {
        var headers = extra
        if let user { headers[.authorization] = "Bearer \(user.token)" }
        if json != nil, headers[.contentType] == nil { headers[.contentType] = "application/json" }
        let response = try await client.execute(
            uri: uri, method: method, headers: headers, body: json.map { ByteBuffer(string: $0) })
        return Answer(status: response.status, headers: response.headers, body: Data(response.body.readableBytesView))
    }

    func create(
        _ title: String = "A post", content: String = "Some words here.", status: PostStatus? = nil,
        coverImage: String? = nil, as user: TestUser
    ) async throws -> Post {
        var body: [String: Any] = ["title": title, "content": content]
        if let status { body["status"] = status.rawValue }
        if let coverImage { body["coverImage"] = coverImage }
        let answer = try await request(.post, "/api/posts", as: user, json: Self.json(body))
        guard answer.status == .created else { throw UnexpectedAnswer(answer: answer) }
        return try answer.post()
    }

    static func json(_ object: [String: Any]) -> String {
        String(decoding: try! JSONSerialization.data(withJSONObject: object), as: UTF8.self)
    }
}

struct UnexpectedAnswer: Error, CustomStringConvertible {
    let answer: Answer
    var description: String { "unexpected \(answer.status): \(answer.text.prefix(500))" }
}

/// Runs `body` against a posts service of its own (fresh database; the shared test broker
/// unless `brokers` names another).
func withPostsService(
    brokers: String? = nil, poolSize: Int = 8, viewFlushInterval: Duration = .milliseconds(200),
    afterShutdown: @Sendable (Database) async throws -> Void = { _ in }, _ body: @escaping @Sendable (PostsClient) async throws -> Void
) async throws {
    let testDatabase = try await TestDatabase.create(poolSize: 2)
    let issuer = try await TestTokenIssuer()
    var configuration = PostsConfiguration(environment: [:])
    var postgres = testDatabase.configuration
    postgres.poolSize = poolSize
    configuration.service.postgres = postgres
    configuration.service.kafka = try testConfiguration(brokers: brokers)
    configuration.viewFlushInterval = viewFlushInterval
    let jwks = issuer.jwks
    do {
        let app = try await buildApplication(configuration, logger: testLogger, fetchJWKS: { jwks })
        try await app.test(.router) { client in
            try await body(PostsClient(client: client, issuer: issuer, database: testDatabase.database))
        }
        try await afterShutdown(testDatabase.database)
    } catch {
        await testDatabase.drop()
        throw error
    }
    await testDatabase.drop()
}
