import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import PostlyEvents
import PostlyKafka
import PostlyModels
import PostlyPostgres
import TestSupport

@testable import CommentsService

/// The comments service built as `main` builds it (the shared `ServiceTestHarness`), with a
/// test token issuer; `database` is a second pool to the same database for seeding and
/// looking inside.
struct CommentsTestService: Sendable {
    typealias User = TestUser

    let harness: ServiceTestHarness
    var issuer: TestTokenIssuer { harness.issuer }
    var database: Database { harness.database }
    /// The write unit's clock, which ages idempotency keys.
    var clock: TestClock { harness.clock }

    /// Runs the application (migrations, outbox relay, consumer) for `body`. `postsURL`
    /// defaults to a port nothing listens on.
    static func run(
        postsURL: String? = nil, kafka: KafkaConfiguration? = nil, importToken: String? = nil, importPostWait: Duration = .seconds(10),
        _ body: @Sendable @escaping (CommentsTestService, any TestClientProtocol) async throws -> Void
    ) async throws {
        let closedPort = try TestBroker.freePort()
        try await ServiceTestHarness.run { setup in
            var configuration = CommentsConfiguration(environment: ["POSTS_URL": postsURL ?? "http://127.0.0.1:\(closedPort)"])
            configuration.service.importToken = importToken.map(Secret.init)
            configuration.importPostWait = importPostWait
            configuration.service.postgres = setup.postgres
            configuration.service.kafka = kafka ?? setup.kafka
            return try buildApplication(configuration, logger: testLogger, options: setup.options)
        } _: { harness in
            try await body(CommentsTestService(harness: harness), harness.client)
        }
    }

    func user(_ name: String) async throws -> User {
        try await harness.user(name)
    }

    /// Applies an event as the consumer would (without its Kafka part).
    func apply(_ event: Event) async throws {
        try await database.transaction { connection in
            try await CommentsEventHandler(writes: WriteUnit(database: database, producer: "comments", logger: testLogger))
                .apply(event, in: connection)
        }
    }

    /// A post the projection knows from a `post.created` event.
    @discardableResult
    func seedPost(
        by author: User, id: String = UUID().uuidString.lowercased(), status: PostStatus = .published,
        title: String = "A post", sequence: Int64 = 1
    ) async throws -> String {
        try await apply(postEvent(.created, id: id, authorId: author.id, status: status, title: title, sequence: sequence))
        return id
    }

    /// The events in the outbox, oldest first.
    func outboxEvents() async throws -> [Event] {
        try await database.query("SELECT payload FROM outbox ORDER BY id").map {
            try PostlyJSON.decoder().decode(Event.self, from: Data(try $0.decode("payload", as: [UInt8].self)))
        }
    }

    func commentCount(postId: String) async throws -> Int {
        try await database.query("SELECT count(*) AS n FROM comments WHERE post_id = \(postId)").first?.decode("n", as: Int.self) ?? 0
    }
}

enum PostChange {
    case created, updated, deleted
}

func postEvent(
    _ change: PostChange, id: String, authorId: String, status: PostStatus = .published, title: String = "A post",
    sequence: Int64
) -> Event {
    let snapshot = PostSnapshot.sample(
        id: id, title: title, status: status, author: Author(userId: authorId, name: "Author"), deleted: change == .deleted,
        version: Int(sequence))
    let data: EventData =
        switch change {
        case .created: .postCreated(snapshot)
        case .updated: .postUpdated(snapshot)
        case .deleted: .postDeleted(snapshot)
        }
    return Event(producer: "posts", key: id, sequence: sequence, actorId: authorId, data: data)
}

// MARK: - Requests

extension TestClientProtocol {
    func postComment(
        _ postId: String, content: String?, as user: CommentsTestService.User?, idempotencyKey: String? = nil
    ) async throws -> TestResponse {
        var headers: HTTPFields = [.contentType: "application/json"]
        if let user { headers[.authorization] = "Bearer \(user.token)" }
        if let idempotencyKey { headers[HTTPField.Name("Idempotency-Key")!] = idempotencyKey }
        let body: [String: String] = content.map { ["content": $0] } ?? [:]
        return try await execute(
            uri: "/api/posts/\(postId)/comments", method: .post, headers: headers,
            body: ByteBuffer(bytes: try JSONEncoder().encode(body))) { $0 }
    }

    func listComments(_ postId: String, query: String = "", as user: CommentsTestService.User? = nil) async throws -> TestResponse {
        try await execute(uri: "/api/posts/\(postId)/comments\(query)", method: .get, headers: user?.authorization ?? [:]) { $0 }
    }

    func deleteComment(_ commentId: String, of postId: String, as user: CommentsTestService.User?) async throws -> TestResponse {
        // As the app sends it: a JSON content type and no body.
        var headers: HTTPFields = [.contentType: "application/json"]
        if let user { headers[.authorization] = "Bearer \(user.token)" }
        return try await execute(uri: "/api/posts/\(postId)/comments/\(commentId)", method: .delete, headers: headers) { $0 }
    }
}

extension TestResponse {
    var data: Data { body.withUnsafeReadableBytes { Data($0) } }
    var problem: Problem? { try? PostlyJSON.decoder().decode(Problem.self, from: data) }
    /// Decoded the way the iOS app decodes: strict keys, dates with milliseconds.
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try PostlyJSON.decoder().decode(T.self, from: data) }
    var json: Any? { try? JSONSerialization.jsonObject(with: data) }
}

/// The shape of a JSON value: an object's keys with their values' shapes, an array's first
/// element's shape; scalars and null alike as "value" (nullable fields may be either).
func shape(_ value: Any?) -> String {
    switch value {
    case let object as [String: Any]:
        return "{" + object.keys.sorted().map { "\($0): \(shape(object[$0]!))" }.joined(separator: ", ") + "}"
    case let array as [Any]:
        return "[" + (array.first.map { shape($0) } ?? "") + "]"
    default:
        return "value"
    }
}

func jsonObject(_ event: Event) throws -> [String: Any] {
    try JSONSerialization.jsonObject(with: PostlyJSON.encoder().encode(event)) as! [String: Any]
}

/// The contract's comment (swift-testing has a `Comment` of its own).
typealias Comment = PostlyModels.Comment
