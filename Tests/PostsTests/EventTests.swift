import Foundation
import PostlyEvents
import PostlyKafka
import PostlyModels
import PostsService
import Testing
import TestSupport

/// The event contract: every change emits an event shaped like its sample in
/// `Tests/Fixtures/events/`, and the sample user and comment events feed the projections.
@Suite(.serialized) struct EventTests {
    /// The keys of an object and of the objects inside it, as `a.b` paths.
    static func keyPaths(_ value: Any, prefix: String = "") -> Set<String> {
        guard let object = value as? [String: Any] else { return [] }
        var paths: Set<String> = []
        for (key, inner) in object {
            paths.insert(prefix + key)
            paths.formUnion(keyPaths(inner, prefix: prefix + key + "."))
        }
        return paths
    }

    static func json(_ bytes: [UInt8]) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any] ?? [:]
    }

    @Test func everyChangeEmitsItsEventShapedLikeTheSample() async throws {
        let broker = try await TestBroker.start()
        defer { broker.stop() }
        let kafka = try testConfiguration(brokers: broker.brokers)
        try await KafkaTopics.create(Topic.allCases.map(\.rawValue), configuration: kafka)
        try await withPostsService(brokers: broker.brokers) { api in
            let ada = try await api.user("Ada Lovelace")
            let bob = try await api.user("Grace Hopper")
            let post = try await api.create("Crème brûlée", content: "Custard.", status: .draft, as: ada)
            try await api.request(.put, "/api/posts/\(post.id)", as: ada, json: #"{"title":"Crème brûlée, done right","status":"published"}"#)
            try await api.request(.post, "/api/posts/\(post.id)/like", as: bob)
            try await api.request(.delete, "/api/posts/\(post.id)/like", as: bob)
            try await api.request(.delete, "/api/posts/\(post.id)", as: ada)

            let consumer = try KafkaConsumer(
                configuration: kafka, groupID: uniqueName("posts-events"), topics: [Topic.posts.rawValue], logger: testLogger)
            let messages = try await withRunning([consumer]) { try await receive(5, from: consumer) }
            let types: [EventType] = [.postCreated, .postUpdated, .postLiked, .postUnliked, .postDeleted]
            let events = try messages.map { try PostlyJSON.decoder().decode(Event.self, from: Data($0.value)) }
            #expect(events.map(\.type) == types)
            #expect(events.map(\.sequence) == [1, 2, 3, 4, 5])
            #expect(events.allSatisfy { $0.key == post.id && $0.producer == "posts" })
            #expect(messages.allSatisfy { $0.key == post.id })
            for (message, type) in zip(messages, types) {
                let emitted = Self.json(message.value)
                let sample = try JSONSerialization.jsonObject(with: EventFixtures.data(type)) as! [String: Any]
                #expect(Set(emitted.keys) == Set(sample.keys), "\(type)")
                #expect(Self.keyPaths(emitted["data"]!) == Self.keyPaths(sample["data"]!), "\(type)")
            }
            guard case .postUpdated(let updated) = events[1].data, case .postLiked(let like) = events[2].data,
                  case .postUnliked(let unlike) = events[3].data, case .postDeleted(let deleted) = events[4].data
            else { Issue.record("unexpected payloads"); return }
            #expect(updated.post.version == 2 && updated.post.status == .published && updated.post.slug == "creme-brulee-done-right")
            #expect(like.liker == Author(userId: bob.id, name: "Grace Hopper") && like.likes == 1 && like.postAuthorId == ada.id)
            #expect(unlike.likes == 0)
            #expect(deleted.deletedAt != nil)
            #expect(events[0].actorId == ada.id && events[2].actorId == bob.id)
        }
    }

    @Test func sampleUserAndCommentEventsUpdateAuthorsAndComments() async throws {
        let broker = try await TestBroker.start()
        defer { broker.stop() }
        let kafka = try testConfiguration(brokers: broker.brokers)
        try await KafkaTopics.create(Topic.allCases.map(\.rawValue), configuration: kafka)
        // The read model keeps a post until a change drops it: the events must drop what they change.
        try await withPostsService(brokers: broker.brokers) { api in
            let registered = try EventFixtures.event(.userRegistered)
            let updated = try EventFixtures.event(.userUpdated)
            let created = try EventFixtures.event(.commentCreated)
            let deleted = try EventFixtures.event(.commentDeleted)
            guard case .userUpdated(let user) = updated.data, case .commentCreated(let comment) = created.data else {
                Issue.record("unexpected samples"); return
            }
            // The samples' author writes a post under the samples' ids.
            let ada = try await api.user("Token Name", id: user.userId)
            let post = try await api.create("Crème brûlée", as: ada)
            #expect(post.author.name == "Token Name")
            func retargeted(_ event: Event) throws -> [UInt8] {
                var text = String(decoding: try PostlyJSON.encoder().encode(event), as: UTF8.self)
                text = text.replacingOccurrences(of: comment.comment.postId, with: post.id)
                return Array(text.utf8)
            }
            let producer = try KafkaProducer(configuration: kafka, logger: testLogger)
            try await withRunning([producer]) {
                for event in [registered, updated, created] {
                    _ = try await producer.send(KafkaOutgoingMessage(
                        topic: event.topic.rawValue, key: event.key == comment.comment.postId ? post.id : event.key, value: try retargeted(event)))
                }
                let applied = try await eventually(within: .seconds(20)) {
                    let current = try await api.request(.get, "/api/posts/\(post.id)").post()
                    return current.author.name == user.name && current.commentsCount == 1
                }
                #expect(applied)
                let current = try await api.request(.get, "/api/posts/\(post.id)").post()
                #expect(current.author == Author(userId: user.userId, name: "Ada King", profilePicture: "https://images.example.test/ada.png"))
                #expect(current.comments.map(\.id) == [comment.comment.id])
                #expect(current.comments.first?.content == comment.comment.content)
                let list = try await api.request(.get, "/api/posts").page()
                #expect(list.posts.first?.commentsCount == 1 && list.posts.first?.comments.count == 1)

                _ = try await producer.send(KafkaOutgoingMessage(topic: deleted.topic.rawValue, key: post.id, value: try retargeted(deleted)))
                let removed = try await eventually(within: .seconds(20)) {
                    try await api.request(.get, "/api/posts/\(post.id)").post().commentsCount == 0
                }
                #expect(removed)
            }
        }
    }

    @Test func republishEmitsPostUpdatedForEveryPost() async throws {
        let broker = try await TestBroker.start()
        defer { broker.stop() }
        let kafka = try testConfiguration(brokers: broker.brokers)
        try await KafkaTopics.create(Topic.allCases.map(\.rawValue), configuration: kafka)
        try await withPostsService(brokers: broker.brokers) { api in
            let ada = try await api.user()
            let first = try await api.create("One", as: ada)
            let second = try await api.create("Two", status: .draft, as: ada)
            let repository = PostgresPostRepository(database: api.database)
            let writes = WriteUnit(database: api.database, producer: "posts", logger: testLogger)
            #expect(try await repository.republishAll(through: writes) == 2)
            let consumer = try KafkaConsumer(
                configuration: kafka, groupID: uniqueName("republish"), topics: [Topic.posts.rawValue], logger: testLogger)
            let events = try await withRunning([consumer]) {
                try await receive(4, from: consumer).map { try PostlyJSON.decoder().decode(Event.self, from: Data($0.value)) }
            }
            let republished = events.filter { $0.type == .postUpdated }
            #expect(Set(republished.map(\.key)) == [first.id, second.id])
            #expect(republished.allSatisfy { $0.sequence == 2 })
        }
    }
}
