import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import PostlyModels
import PostlyPostgres
import PostlyService
import PostsService
import TestSupport

typealias Answer = TestAnswer

extension TestAnswer {
    func post() throws -> Post { try PostlyJSON.decoder().decode(Post.self, from: body) }
    func page() throws -> PostPage { try PostlyJSON.decoder().decode(PostPage.self, from: body) }
    var problem: Problem? { try? PostlyJSON.decoder().decode(Problem.self, from: body) }
}

/// The posts service built as in production, on a fresh database, driven through its router
/// (the shared `ServiceTestHarness`), with the posts routes' own helpers.
struct PostsClient: Sendable {
    let harness: ServiceTestHarness
    /// The test database, for looking behind the API.
    var database: Database { harness.database }
    /// The write unit's clock, which ages idempotency keys.
    var clock: TestClock { harness.clock }

    func user(_ name: String = "Ada Lovelace", id: String = UUID().uuidString.lowercased()) async throws -> TestUser {
        try await harness.user(name, id: id)
    }

    @discardableResult
    func request(
        _ method: HTTPRequest.Method, _ uri: String, as user: TestUser? = nil, json: String? = nil,
        headers extra: HTTPFields = [:]
    ) async throws -> Answer {
        try await harness.request(method, uri, as: user, json: json, headers: extra)
    }

    func create(
        _ title: String = "A post", content: String = "Some words here.", status: PostStatus? = nil,
        coverImage: String? = nil, publishAt: Date? = nil, as user: TestUser
    ) async throws -> Post {
        var body: [String: Any] = ["title": title, "content": content]
        if let status { body["status"] = status.rawValue }
        if let coverImage { body["coverImage"] = coverImage }
        if let publishAt { body["publishAt"] = Timestamp.format(publishAt) }
        let answer = try await request(.post, "/api/posts", as: user, json: Self.json(body))
        guard answer.status == .created else { throw UnexpectedAnswer(answer: answer) }
        return try answer.post()
    }

    static func json(_ object: [String: Any]) -> String {
        (try? JSONSerialization.data(withJSONObject: object)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }
}

struct UnexpectedAnswer: Error, CustomStringConvertible {
    let answer: Answer
    var description: String { "unexpected \(answer.status): \(answer.text.prefix(500))" }
}

/// Runs `body` against a posts service of its own (fresh database; the shared test broker
/// unless `brokers` names another).
func withPostsService(
    brokers: String? = nil, poolSize: Int = 8, viewFlushInterval: Duration = .milliseconds(200), schedulerPoll: Duration = .seconds(1),
    realClock: Bool = false, importToken: String? = nil, afterShutdown: @Sendable (Database) async throws -> Void = { _ in },
    _ body: @escaping @Sendable (PostsClient) async throws -> Void
) async throws {
    try await ServiceTestHarness.run(brokers: brokers, poolSize: poolSize) { setup in
        var configuration = PostsConfiguration(environment: [:])
        configuration.service.importToken = importToken.map(Secret.init)
        configuration.service.postgres = setup.postgres
        configuration.service.kafka = setup.kafka
        configuration.viewFlushInterval = viewFlushInterval
        configuration.schedulerPoll = schedulerPoll
        // The test's clock stands still until the test moves it; `realClock` runs the service on the wall clock.
        let options = realClock ? ServiceKit.Options(fetchJWKS: setup.fetchJWKS) : setup.options
        return try buildApplication(configuration, logger: testLogger, options: options)
    } afterShutdown: { database in
        try await afterShutdown(database)
    } _: { harness in
        try await body(PostsClient(harness: harness))
    }
}
