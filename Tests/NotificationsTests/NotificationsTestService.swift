import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import PostlyKafka
import PostlyModels
import PostlyPostgres
import Testing
import TestSupport

@testable import NotificationsService

/// The notifications service built as `main` builds it, listening on a port, on a database
/// and a broker of the test's own (so its consumer group sees only this test's events),
/// with a test token issuer. `database` is a second pool to the same database.
struct NotificationsTestService: Sendable {
    let issuer: TestTokenIssuer
    let testDatabase: TestDatabase
    var database: Database { testDatabase.database }
    let kafka: KafkaConfiguration
    let producer: KafkaProducer
    /// Each running instance: its hub and its port.
    let instances: [Instance]

    struct Instance: Sendable {
        let hub: NotificationHub
        let client: any TestClientProtocol
        var port: Int { client.port ?? 0 }
    }

    /// Runs one instance (or two on one database: the second consumes from the broker the
    /// test publishes to, the first from an empty broker of its own).
    static func run(
        instances count: Int = 1, configure: @Sendable (inout NotificationsConfiguration) -> Void = { _ in },
        _ body: @Sendable @escaping (NotificationsTestService) async throws -> Void
    ) async throws {
        let broker = try await TestBroker.start()
        let otherBroker = count > 1 ? try await TestBroker.start() : nil
        defer {
            broker.stop()
            otherBroker?.stop()
        }
        let kafka = try testConfiguration(brokers: broker.brokers, messageTimeout: .seconds(5))
        let testDatabase = try await TestDatabase.create()
        let issuer = try await TestTokenIssuer()
        let jwks = issuer.jwks
        func build(_ kafka: KafkaConfiguration) async throws -> (app: some ApplicationProtocol, hub: NotificationHub) {
            var configuration = NotificationsConfiguration(environment: ["NOTIFICATIONS_HEARTBEAT_MS": "15000"])
            configuration.service.postgres = testDatabase.configuration
            configuration.service.kafka = kafka
            configure(&configuration)
            return try buildApplicationAndHub(configuration, logger: testLogger, options: .init(fetchJWKS: { jwks }))
        }
        do {
            let producer = try KafkaProducer(configuration: kafka, logger: testLogger)
            let consuming = try await build(kafka)
            try await withRunning([producer]) {
                if let otherBroker {
                    let other = try await build(try testConfiguration(brokers: otherBroker.brokers, messageTimeout: .seconds(5)))
                    try await other.app.test(.live) { otherClient in
                        try await consuming.app.test(.live) { client in
                            try await listening(other.hub, consuming.hub)
                            try await body(
                                NotificationsTestService(
                                    issuer: issuer, testDatabase: testDatabase, kafka: kafka, producer: producer,
                                    instances: [Instance(hub: other.hub, client: otherClient), Instance(hub: consuming.hub, client: client)]))
                        }
                    }
                } else {
                    try await consuming.app.test(.live) { client in
                        try await listening(consuming.hub)
                        try await body(
                            NotificationsTestService(
                                issuer: issuer, testDatabase: testDatabase, kafka: kafka, producer: producer,
                                instances: [Instance(hub: consuming.hub, client: client)]))
                    }
                }
            }
            await testDatabase.drop()
        } catch {
            await testDatabase.drop()
            throw error
        }
    }

    /// Waits until the hubs have listened: a stream opened before would be ended when they start.
    private static func listening(_ hubs: NotificationHub...) async throws {
        try #require(try await eventually(within: .seconds(10)) { hubs.allSatisfy(\.hasListened) }, "the hubs have listened")
    }

    var client: any TestClientProtocol { instances[0].client }

    func whileTheDatabaseIsDown(_ body: () async throws -> Void) async throws {
        try await testDatabase.whileDown(body)
    }
    var hub: NotificationHub { instances[0].hub }
    var port: Int { instances[0].port }

    // MARK: - Users

    struct User: Sendable {
        var id: String
        var name: String
        var sessionId: String
        var token: String
        var authorization: HTTPFields { [.authorization: "Bearer \(token)"] }
        var author: Author { Author(userId: id, name: name) }
    }

    /// A user with a token valid for `lifetime` seconds.
    func user(_ name: String, id: String = UUID().uuidString.lowercased(), lifetime: TimeInterval = 3600) async throws -> User {
        let sessionId = UUID().uuidString.lowercased()
        return User(
            id: id, name: name, sessionId: sessionId,
            token: try await issuer.token(userId: id, sessionId: sessionId, name: name, lifetime: lifetime))
    }

    // MARK: - Events

    /// Publishes the event as its producer would: on its topic, keyed by its key.
    func publish(_ event: Event) async throws {
        let value = try [UInt8](PostlyJSON.encoder().encode(event))
        _ = try await producer.send(KafkaOutgoingMessage(topic: event.topic.rawValue, key: event.key, value: value))
    }

    /// Publishes the `sequence`-th comment event of `post`: `commenter` commenting on `author`'s post.
    func publishComment(on post: String, of author: User, by commenter: User, sequence: Int64) async throws {
        try await publish(commentEvent(post: post, author: author.id, commenter: commenter.author, sequence: sequence))
    }

    /// Waits until the consumer has applied (or skipped as older) the key's events up to `sequence`.
    func waitUntilConsumed(_ topic: Topic, key: String, sequence: Int64) async throws {
        let consumed = try await eventually {
            let rows = try await database.query(
                """
                SELECT sequence FROM consumed_sequences
                WHERE consumer = 'notifications' AND topic = \(topic.rawValue) AND key = \(key)
                """)
            return try rows.first.map { try $0.decode("sequence", as: Int64.self) >= sequence } ?? false
        }
        if !consumed { throw TimedOut(waitingFor: "\(topic.rawValue) \(key) up to \(sequence)") }
    }

    /// Waits until the consumer group has joined and applies events of every topic: the first
    /// join takes seconds, and a topic's first fetches most of a second more, which a deployed
    /// consumer has long behind it.
    func waitForConsumer() async throws {
        let user = UserSnapshot(userId: UUID().uuidString.lowercased(), name: "Warm-up", profilePicture: nil)
        let post = UUID().uuidString.lowercased()
        try await publish(Event(producer: "auth", key: user.userId, sequence: 1, actorId: user.userId, data: .userRegistered(user)))
        try await publish(likeEvent(post: post, author: user.userId, liker: user.author, sequence: 1))
        try await publish(commentEvent(post: post, author: user.userId, commenter: user.author, sequence: 1))
        try await waitUntilConsumed(.users, key: user.userId, sequence: 1)
        try await waitUntilConsumed(.posts, key: post, sequence: 1)
        try await waitUntilConsumed(.comments, key: post, sequence: 1)
    }

    // MARK: - Requests

    func list(_ query: String = "", as user: User?, on instance: Int = 0) async throws -> TestResponse {
        try await instances[instance].client.execute(uri: "/api/notifications\(query)", method: .get, headers: user?.authorization ?? [:]) { $0 }
    }

    func page(_ query: String = "", as user: User) async throws -> NotificationPage {
        let response = try await list(query, as: user)
        guard response.status == .ok else { throw UnexpectedStatus(status: response.status) }
        return try response.decode(NotificationPage.self)
    }

    func markRead(_ body: String, as user: User?, contentType: String = "application/json") async throws -> TestResponse {
        try await markRead(bytes: Array(body.utf8), as: user, contentType: contentType)
    }

    func markRead(bytes: [UInt8], as user: User?, contentType: String = "application/json") async throws -> TestResponse {
        var headers: HTTPFields = [.contentType: contentType]
        if let user { headers[.authorization] = "Bearer \(user.token)" }
        return try await client.execute(uri: "/api/notifications/read", method: .post, headers: headers, body: ByteBuffer(bytes: bytes)) { $0 }
    }

    func ticket(for user: User?, on instance: Int = 0) async throws -> TestResponse {
        var headers: HTTPFields = [.contentType: "application/json"]
        if let user { headers[.authorization] = "Bearer \(user.token)" }
        return try await instances[instance].client.execute(uri: "/api/notifications/stream-ticket", method: .post, headers: headers) { $0 }
    }

    /// Opens the user's stream on an instance, as the app does (a token in the header).
    func openStream(as user: User, on instance: Int = 0, lastEventId: String? = nil) async throws -> EventStreamClient {
        var headers = ["Authorization": "Bearer \(user.token)"]
        if let lastEventId { headers["Last-Event-ID"] = lastEventId }
        return try await EventStreamClient.open(port: instances[instance].port, headers: headers)
    }
}

struct UnexpectedStatus: Error {
    var status: HTTPResponse.Status
}

// MARK: - Events as the posts and comments services write them

func likeEvent(post: String, title: String = "A post", author: String, liker: Author, sequence: Int64, unlike: Bool = false) -> Event {
    let like = PostLike(postId: post, postTitle: title, postAuthorId: author, liker: liker, likes: 1)
    return Event(producer: "posts", key: post, sequence: sequence, actorId: liker.userId, data: unlike ? .postUnliked(like) : .postLiked(like))
}

func commentEvent(
    post: String, title: String = "A post", author: String, commenter: Author, commentId: String = UUID().uuidString.lowercased(),
    sequence: Int64, deleted: Bool = false
) -> Event {
    let comment = Comment(id: commentId, postId: post, content: "Nice", author: commenter, createdAt: wholeMilliseconds(Date()))
    let snapshot = CommentSnapshot(comment: comment, postTitle: title, postAuthorId: author)
    return Event(
        producer: "comments", key: post, sequence: sequence, actorId: commenter.userId,
        data: deleted ? .commentDeleted(snapshot) : .commentCreated(snapshot))
}

func postDeletedEvent(post: String, author: Author, sequence: Int64) -> Event {
    let snapshot = PostSnapshot.sample(id: post, author: author, at: wholeMilliseconds(Date()), deleted: true, version: 2)
    return Event(producer: "posts", key: post, sequence: sequence, actorId: author.userId, data: .postDeleted(snapshot))
}

func wholeMilliseconds(_ date: Date) -> Date {
    Date(timeIntervalSince1970: (date.timeIntervalSince1970 * 1000).rounded(.down) / 1000)
}

extension TestResponse {
    var data: Data { body.withUnsafeReadableBytes { Data($0) } }
    var problem: Problem? { try? PostlyJSON.decoder().decode(Problem.self, from: data) }
    /// Decoded the way the iOS app decodes: strict keys, dates with milliseconds.
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try PostlyJSON.decoder().decode(T.self, from: data) }
}

extension EventStreamClient.Event {
    var notification: Notification? {
        try? PostlyJSON.decoder().decode(Notification.self, from: Data(data.utf8))
    }
}

/// The contract's comment and notification (swift-testing and Foundation have their own).
typealias Comment = PostlyModels.Comment
typealias Notification = PostlyModels.Notification

