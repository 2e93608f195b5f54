import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import PostlyKafka
import PostlyModels
import PostlyPostgres
import Testing
import TestSupport

@testable import SearchService

/// The search service built as `main` builds it, on a database and a broker of the test's own
/// (so no other test's posts are found); `database` is a second pool to the same database.
struct SearchTestService: Sendable {
    let database: Database
    let configuration: SearchConfiguration
    /// The service's index in memory.
    let index: SearchIndex
    var kafka: KafkaConfiguration { configuration.service.kafka }

    /// - Parameter prepare: runs on the empty database before the service starts (and applies
    ///   its migrations).
    static func run(
        prepare: @Sendable (Database) async throws -> Void = { _ in },
        _ body: @Sendable @escaping (SearchTestService, any TestClientProtocol) async throws -> Void
    ) async throws {
        let broker = try await TestBroker.start()
        defer { broker.stop() }
        let kafka = try testConfiguration(brokers: broker.brokers, messageTimeout: .seconds(2))
        var configuration = SearchConfiguration(environment: [:])
        let testDatabase = try await TestDatabase.create()
        configuration.service.postgres = testDatabase.configuration
        configuration.service.kafka = kafka
        let issuer = try await TestTokenIssuer()
        let jwks = issuer.jwks
        let index = SearchIndex()
        let service = SearchTestService(database: testDatabase.database, configuration: configuration, index: index)
        do {
            try await prepare(testDatabase.database)
            let app = try buildApplication(configuration, index: index, logger: testLogger, options: .init(fetchJWKS: { jwks }))
            try await app.test(.router) { client in
                try #require(try await eventually(within: .seconds(10)) { index.isLoaded }, "the index loads")
                try await body(service, client)
            }
            await testDatabase.drop()
        } catch {
            await testDatabase.drop()
            throw error
        }
    }

    /// Two instances of the service on one database and one broker, each with its index in
    /// memory and its consumer in the one consumer group (so each is sent a share of the
    /// events).
    static func runTwo(
        _ body: @Sendable @escaping (SearchTestService, any TestClientProtocol, any TestClientProtocol) async throws -> Void
    ) async throws {
        try await run { first, firstClient in
            let secondIndex = SearchIndex()
            let issuer = try await TestTokenIssuer()
            let jwks = issuer.jwks
            let second = try buildApplication(first.configuration, index: secondIndex, logger: testLogger, options: .init(fetchJWKS: { jwks }))
            try await second.test(.router) { secondClient in
                try #require(try await eventually(within: .seconds(10)) { secondIndex.isLoaded }, "the second index loads")
                try await body(first, firstClient, secondClient)
            }
        }
    }

    /// Applies events as the consumer would a batch (without its Kafka part), and waits until the index
    /// in memory has them.
    func apply(_ events: Event...) async throws {
        try await database.transaction { connection in
            try await SearchIndexer(index: index).apply(events, in: connection)
        }
        try await caughtUp()
    }

    /// Waits until the index in memory has every change committed so far.
    func caughtUp() async throws {
        let newest = try await database.query("SELECT coalesce(max(position), 0) AS newest FROM changes")[0].decode("newest", as: Int64.self)
        try #require(try await eventually(within: .seconds(30)) { (index.position ?? 0) >= newest }, "the index catches up")
    }

    /// Sends `event` through the broker, as its producer would.
    func send(_ event: Event, with producer: KafkaProducer) async throws {
        _ = try await producer.send(KafkaOutgoingMessage(
            topic: event.topic.rawValue, key: event.key, value: Array(try PostlyJSON.encoder().encode(event))))
    }

    /// A published post, indexed; returns its id.
    @discardableResult
    func publish(
        _ title: String, content: String = "Nothing much.", author: Author = Author(userId: "ada", name: "Ada Lovelace"),
        publishedAt: Date = Date(), sequence: Int64 = 1, id: String = UUID().uuidString.lowercased()
    ) async throws -> String {
        try await apply(postEvent(.created, id: id, title: title, content: content, author: author, publishedAt: publishedAt, sequence: sequence))
        return id
    }
}

enum PostChange {
    case created, updated, deleted
}

func postEvent(
    _ change: PostChange, id: String, title: String, content: String = "Nothing much.", status: PostStatus = .published,
    author: Author = Author(userId: "ada", name: "Ada Lovelace"), publishedAt: Date = Date(), likes: Int = 0, sequence: Int64
) -> Event {
    var snapshot = PostSnapshot.sample(
        id: id, title: title, content: content, status: status, author: author, at: publishedAt, deleted: change == .deleted,
        version: Int(sequence))
    snapshot.post.likes = likes
    let data: EventData =
        switch change {
        case .created: .postCreated(snapshot)
        case .updated: .postUpdated(snapshot)
        case .deleted: .postDeleted(snapshot)
        }
    return Event(producer: "posts", key: id, sequence: sequence, actorId: author.userId, data: data)
}

func userEvent(_ user: UserSnapshot, sequence: Int64) -> Event {
    Event(producer: "auth", key: user.userId, sequence: sequence, actorId: user.userId, data: .userUpdated(user))
}

/// A result as the app decodes it, with what search adds.
struct FoundPost: Decodable {
    struct Highlights: Decodable {
        var title: String
        var excerpt: String
    }

    var id: String
    var title: String
    var content: String
    var contentHtml: String?
    var excerpt: String
    var slug: String
    var status: PostStatus
    var coverImage: String?
    var author: Author
    var views: Int
    var likes: Int
    var comments: [PostlyModels.Comment]
    var commentsCount: Int
    var readTime: Int
    var createdAt: Date
    var updatedAt: Date
    var publishedAt: Date?
    var version: Int
    var highlights: Highlights

    enum CodingKeys: String, CodingKey {
        case id = "_id", title, content, contentHtml, excerpt, slug, status, coverImage, author, views, likes, comments,
            commentsCount, readTime, createdAt, updatedAt, publishedAt, version, highlights
    }
}

extension TestClientProtocol {
    /// `GET /api/posts/search` with `query` exactly as given (already in URL form).
    func search(rawQuery query: String) async throws -> TestResponse {
        try await execute(uri: "/api/posts/search?\(query)", method: .get) { $0 }
    }

    func search(_ text: String, extra: String = "") async throws -> TestResponse {
        let encoded = text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? text
        return try await search(rawQuery: "q=\(encoded)\(extra)")
    }

    /// The results' titles, best first; empty when the answer is not a 200.
    func found(_ text: String) async throws -> [FoundPost] {
        let response = try await search(text)
        guard response.status == .ok else { return [] }
        return try response.decode([FoundPost].self)
    }

    func titles(_ text: String) async throws -> [String] {
        try await found(text).map(\.title)
    }
}

extension TestResponse {
    var data: Data { body.withUnsafeReadableBytes { Data($0) } }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try PostlyJSON.decoder().decode(T.self, from: data) }
    var problem: Problem? { try? PostlyJSON.decoder().decode(Problem.self, from: data) }
    var totalCount: String? { headers[HTTPField.Name("X-Total-Count")!] }
}
