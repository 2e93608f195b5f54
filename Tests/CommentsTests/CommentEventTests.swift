import Foundation
import HTTPTypes
import HummingbirdTesting
import PostlyKafka
import PostlyModels
import PostlyPostgres
import Testing
import TestSupport

@testable import CommentsService

/// The events the service writes, compared with the samples in `Tests/Fixtures/events/`.
@Suite struct CommentEventTests {
    @Test func creatingAndDeletingACommentEmitEventsShapedLikeTheSamples() async throws {
        try await CommentsTestService.run { service, client in
            let author = try await service.user("Ada")
            let reader = try await service.user("Grace")
            let postId = try await service.seedPost(by: author, title: "Crème brûlée")
            let comment = try await client.postComment(postId, content: "Torch on low", as: reader).decode(Comment.self)
            #expect(try await client.deleteComment(comment.id, of: postId, as: reader).status == .ok)

            let events = try await service.outboxEvents()
            #expect(events.map(\.type) == [.commentCreated, .commentDeleted])
            #expect(events.map(\.sequence) == [1, 2])
            for (event, type) in zip(events, [EventType.commentCreated, .commentDeleted]) {
                let sample = try EventFixtures.event(type)
                #expect(event.key == postId)
                #expect(event.producer == sample.producer)
                #expect(event.actorId == reader.id)
                #expect(event.topic == .comments)
                let emitted = try jsonObject(event)
                let expected = try jsonObject(sample)
                #expect(Set(emitted.keys) == Set(expected.keys))
                #expect(shape(emitted["data"]) == shape(expected["data"]))
                guard case .commentCreated(let snapshot) = events[0].data else { Issue.record("not comment.created"); return }
                #expect(snapshot == CommentSnapshot(comment: comment, postTitle: "Crème brûlée", postAuthorId: author.id))
            }
            guard case .commentDeleted(let deleted) = events[1].data else { Issue.record("not comment.deleted"); return }
            #expect(deleted.comment == comment)
        }
    }

    @Test func eachPostHasItsOwnSequenceOfCommentEvents() async throws {
        try await CommentsTestService.run { service, client in
            let author = try await service.user("Ada")
            let first = try await service.seedPost(by: author)
            let second = try await service.seedPost(by: author)
            for postId in [first, second, first, first, second] {
                #expect(try await client.postComment(postId, content: "x", as: author).status == .created)
            }
            let events = try await service.outboxEvents()
            #expect(events.filter { $0.key == first }.map(\.sequence) == [1, 2, 3])
            #expect(events.filter { $0.key == second }.map(\.sequence) == [1, 2])
        }
    }

    @Test func aDeletedPostsCommentsEachEmitCommentDeleted() async throws {
        try await CommentsTestService.run { service, client in
            let author = try await service.user("Ada")
            let reader = try await service.user("Grace")
            let postId = try await service.seedPost(by: author, title: "Soon gone")
            let comments = [
                try await client.postComment(postId, content: "one", as: reader).decode(Comment.self),
                try await client.postComment(postId, content: "two", as: author).decode(Comment.self),
            ]
            try await service.apply(postEvent(.deleted, id: postId, authorId: author.id, title: "Soon gone", sequence: 2))
            // Applied again (redelivery): nothing more.
            try await service.apply(postEvent(.deleted, id: postId, authorId: author.id, title: "Soon gone", sequence: 2))

            let deletions = try await service.outboxEvents().filter { $0.type == .commentDeleted }
            #expect(deletions.map(\.sequence) == [3, 4])
            #expect(deletions.allSatisfy { $0.key == postId && $0.actorId == author.id })
            let deleted = deletions.compactMap { event -> Comment? in
                guard case .commentDeleted(let snapshot) = event.data else { return nil }
                return snapshot.comment
            }
            #expect(deleted == comments)
        }
    }
}

/// The projection of posts, fed with the sample post events.
@Suite struct PostProjectionTests {
    static let samplePostId = "6f1c2a9e-3b7d-4c85-9e21-0a4b8d6f3c19"

    func samples() throws -> [Event] {
        try [EventType.postCreated, .postUpdated, .postLiked, .postUnliked, .postDeleted].map(EventFixtures.event)
    }

    func projected(_ database: Database) async throws -> KnownPost? {
        try await PostgresCommentRepository(database: database).post(id: Self.samplePostId)
    }

    @Test func theSamplesInOrderTwiceOrShuffledEndInTheSameState() async throws {
        try await CommentsTestService.run { service, client in
            let samples = try samples()
            let expected = KnownPost(
                id: Self.samplePostId, authorId: "9b2f7d1e-5c4a-4e8b-9f3a-2d6c8e1b7a40", title: "Crème brûlée, done right",
                status: .published, deleted: true)

            // In order, step by step.
            try await service.apply(samples[0])
            #expect(try await projected(service.database) == KnownPost(id: expected.id, authorId: expected.authorId, title: "Crème brûlée", status: .draft, deleted: false))
            try await service.apply(samples[1])
            #expect(try await projected(service.database) == KnownPost(id: expected.id, authorId: expected.authorId, title: expected.title, status: .published, deleted: false))
            for event in samples.dropFirst(2) { try await service.apply(event) }
            #expect(try await projected(service.database) == expected)

            // Twice.
            for event in samples { try await service.apply(event) }
            #expect(try await projected(service.database) == expected)
            #expect(try await client.listComments(Self.samplePostId).status == .notFound)
        }
    }

    @Test func outOfOrderSamplesEndRight() async throws {
        try await CommentsTestService.run { service, client in
            let samples = try samples()
            let author = try await service.user("Ada")
            // Updated before created: the older created changes nothing.
            try await service.apply(samples[1])
            try await service.apply(samples[0])
            let published = try #require(try await projected(service.database))
            #expect(published.status == .published)
            #expect(published.title == "Crème brûlée, done right")
            #expect(try await client.listComments(Self.samplePostId).status == .ok)
            _ = author

            // Deleted first, then the rest: stays deleted.
            for event in samples.reversed() { try await service.apply(event) }
            #expect(try await projected(service.database)?.deleted == true)
        }
    }

    @Test func theConsumerAppliesSamplesFromKafkaInOrderTwiceAndOutOfOrder() async throws {
        let broker = try await TestBroker.start()
        defer { broker.stop() }
        let kafka = try testConfiguration(brokers: broker.brokers, messageTimeout: .seconds(5))
        try await KafkaTopics.create(Topic.allCases.map(\.rawValue), configuration: kafka)
        try await CommentsTestService.run(kafka: kafka) { service, client in
            let producer = try KafkaProducer(configuration: kafka, logger: testLogger)
            let samples = try EventType.allCases.filter { $0.topic == .posts }.map { try (EventFixtures.event($0), EventFixtures.data($0)) }
                .sorted { $0.0.sequence < $1.0.sequence }
            let commenter = try await service.user("Grace")
            try await withRunning([producer]) {
                // Created and updated, out of order and twice.
                for index in [1, 0, 1, 0] {
                    let (event, data) = samples[index]
                    _ = try await producer.send(KafkaOutgoingMessage(topic: Topic.posts.rawValue, key: event.key, value: [UInt8](data)))
                }
                #expect(try await eventually { try await projected(service.database)?.status == .published })
                #expect(try await projected(service.database)?.title == "Crème brûlée, done right")
                #expect(try await client.postComment(Self.samplePostId, content: "Torch on low", as: commenter).status == .created)

                // Likes, the deletion, then everything again.
                for (event, data) in samples.dropFirst(2) + samples {
                    _ = try await producer.send(KafkaOutgoingMessage(topic: Topic.posts.rawValue, key: event.key, value: [UInt8](data)))
                }
                #expect(try await eventually { try await projected(service.database)?.deleted == true })
                #expect(try await service.commentCount(postId: Self.samplePostId) == 0)
                try await Task.sleep(for: .milliseconds(500))
                #expect(try await projected(service.database)?.deleted == true)
                #expect(try await service.outboxEvents().map(\.type) == [.commentCreated, .commentDeleted])
            }
        }
    }
}
