import Foundation
import HTTPTypes
import PostlyEvents
import PostlyKafka
import PostlyModels
import PostlyPostgres
import PostlyService
import PostsService
import Testing
import TestSupport

/// Writes through the shared write unit: `Idempotency-Key` answers, transient database
/// errors, and a shutdown while the broker is down.
@Suite struct PostIdempotencyTests {
    static let key: HTTPFields = [.idempotencyKey: "offline-7"]
    static let body = #"{"title":"Once","content":"first words"}"#

    @Test func aRetryAfterAnEditOrADeleteAnswersTheFirst201ByteForByte() async throws {
        try await withPostsService { api in
            let ada = try await api.user()
            let first = try await api.request(.post, "/api/posts", as: ada, json: Self.body, headers: Self.key)
            #expect(first.status == .created)
            let id = try first.post().id
            let edited = try await api.request(.put, "/api/posts/\(id)", as: ada, json: #"{"title":"Edited"}"#)
            #expect(edited.status == .ok)

            let afterEdit = try await api.request(.post, "/api/posts", as: ada, json: Self.body, headers: Self.key)
            #expect(afterEdit.status == .created)
            #expect(afterEdit.body == first.body, "the first answer, not the post as it is now")
            #expect(afterEdit.headers[.location] == first.headers[.location] && afterEdit.headers[.eTag] == first.headers[.eTag])

            #expect(try await api.request(.delete, "/api/posts/\(id)", as: ada).status == .ok)
            let afterDelete = try await api.request(.post, "/api/posts", as: ada, json: Self.body, headers: Self.key)
            #expect(afterDelete.status == .created)
            #expect(afterDelete.body == first.body)
            #expect(try await api.request(.get, "/api/users/me/posts", as: ada).page().pagination.total == 0, "nothing new was created")
        }
    }

    @Test func twentyConcurrentRequestsWithOneKeyCreateOnePost() async throws {
        try await withPostsService(poolSize: 10) { api in
            let ada = try await api.user()
            let answers = try await withThrowingTaskGroup(of: Answer.self) { group in
                for _ in 0..<20 {
                    group.addTask { try await api.request(.post, "/api/posts", as: ada, json: Self.body, headers: Self.key) }
                }
                return try await group.reduce(into: [Answer]()) { $0.append($1) }
            }
            let created = answers.filter { $0.status == .created }
            #expect(answers.allSatisfy { $0.status == .created || $0.status == .conflict }, "\(answers.map(\.status))")
            #expect(Set(created.map(\.body)).count == 1, "every 201 is the first answer")
            #expect(try await api.request(.get, "/api/users/me/posts", as: ada).page().pagination.total == 1)
        }
    }

    @Test func aKeyIsForgottenAfterItsTwentyFourHours() async throws {
        try await withPostsService { api in
            let ada = try await api.user()
            let first = try await api.request(.post, "/api/posts", as: ada, json: Self.body, headers: Self.key)
            api.clock.advance(by: 23 * 3600)
            let other = #"{"title":"Another","content":"c"}"#
            #expect(try await api.request(.post, "/api/posts", as: ada, json: other, headers: Self.key).status == .unprocessableContent)
            api.clock.advance(by: 3600 + 1)
            let purged = try await WriteUnit(database: api.database, producer: "posts", clock: api.clock.now, logger: testLogger)
                .purgeExpiredAnswers()
            #expect(purged == 1, "the expired key is purged")
            let later = try await api.request(.post, "/api/posts", as: ada, json: other, headers: Self.key)
            #expect(later.status == .created)
            #expect(try later.post().id != first.post().id)
        }
    }
}

@Suite struct PostTransientErrorTests {
    /// The deadlock of the review: a post's delete locks the post and then its comments; the
    /// consumer applying `comment.deleted` locked the comment and then the post (its comment
    /// counter). The consumer no longer touches the post's row at all.
    @Test func applyingACommentDeletionNeverWaitsForThePostsRow() async throws {
        try await withPostsService { api in
            let ada = try await api.user()
            let post = try await api.create(as: ada)
            let comment = Comment(
                id: UUID().uuidString.lowercased(), postId: post.id, content: "hi", author: Author(userId: ada.id, name: ada.name),
                createdAt: Date())
            let snapshot = CommentSnapshot(comment: comment, postTitle: post.title, postAuthorId: ada.id)
            try await api.database.transaction { connection in
                try await ProjectionHandler().apply(
                    Event(producer: "comments", key: post.id, sequence: 1, actorId: ada.id, data: .commentCreated(snapshot)), in: connection)
            }
            // A delete of the post holds its row (as `DELETE /api/posts/{id}` does first) ...
            try await api.database.transaction { deleting in
                try await deleting.execute("SELECT id FROM posts WHERE id = \(post.id) FOR UPDATE")
                // ... while the consumer applies the comment's deletion: it must not wait for it.
                try await api.database.transaction { consumer in
                    try await consumer.execute("SET LOCAL lock_timeout = '2s'")
                    try await ProjectionHandler().apply(
                        Event(producer: "comments", key: post.id, sequence: 2, actorId: ada.id, data: .commentDeleted(snapshot)), in: consumer)
                }
            }
            let shown = try await api.request(.get, "/api/posts/\(post.id)", as: ada).post()
            #expect(shown.comments.isEmpty && shown.commentsCount == 0)
        }
    }

    @Test func concurrentCreatesAndDeletesOfOneUsersPostsAnswerNo5xx() async throws {
        try await withPostsService(poolSize: 10) { api in
            let ada = try await api.user()
            let statuses = Locked<[UInt: Int]>([:])
            let deadline = ContinuousClock.now + .seconds(10)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for client in 0..<50 {
                    group.addTask {
                        var round = 0
                        while ContinuousClock.now < deadline {
                            round += 1
                            let created = try await api.request(
                                .post, "/api/posts", as: ada, json: #"{"title":"Load \#(client)-\#(round)","content":"c"}"#)
                            var seen = [created.status.code]
                            if created.status == .created {
                                seen.append(try await api.request(.delete, "/api/posts/\(try created.post().id)", as: ada).status.code)
                            }
                            statuses.withLock { counts in for code in seen { counts[UInt(code), default: 0] += 1 } }
                        }
                    }
                }
                try await group.waitForAll()
            }
            let counts = statuses.withLock { $0 }
            #expect(counts.keys.allSatisfy { $0 < 500 }, "\(counts)")
            #expect(counts[201, default: 0] > 0)
        }
    }
}

@Suite struct PostsShutdownTests {
    @Test func withTheBrokerDownTheServiceStopsWithin15SecondsAndLosesNoEvent() async throws {
        let broker = try await TestBroker.start()
        broker.stop()
        let stopping = Locked<ContinuousClock.Instant?>(nil)
        let accepted = Locked<[String]>([])
        try await ServiceTestHarness.run(brokers: broker.brokers) { setup in
            var configuration = PostsConfiguration(environment: [:])
            configuration.service.postgres = setup.postgres
            configuration.service.kafka = setup.kafka
            // As in production: sends wait up to 30 s for the broker, the flush its default.
            configuration.service.kafka.messageTimeout = .seconds(30)
            configuration.service.kafka.shutdownFlushTimeout = KafkaConfiguration(brokers: "").shutdownFlushTimeout
            return try buildApplication(configuration, logger: testLogger, options: setup.options)
        } afterShutdown: { database in
            let stopped = try #require(stopping.withLock { $0 }).duration(to: .now)
            #expect(stopped < .seconds(15), "graceful shutdown took \(stopped)")

            // After the restart the outbox publishes what was accepted, each event once.
            try await broker.start()
            let kafka = try testConfiguration(brokers: broker.brokers)
            try await KafkaTopics.create(Topic.allCases.map(\.rawValue), configuration: kafka)
            let producer = try KafkaProducer(configuration: kafka, logger: testLogger)
            let consumer = try KafkaConsumer(
                configuration: kafka, groupID: uniqueName("restart"), topics: [Topic.posts.rawValue], logger: testLogger)
            let relay = OutboxRelay(database: database, publisher: producer, logger: testLogger)
            let events = try await withRunning([producer, consumer, relay]) {
                try await receive(5, from: consumer, within: .seconds(60))
                    .map { try PostlyJSON.decoder().decode(Event.self, from: Data($0.value)) }
            }
            #expect(events.map(\.key).sorted() == accepted.withLock { $0 }.sorted())
            #expect(Set(events.map(\.id)).count == 5)
            broker.stop()
        } _: { harness in
            let ada = try await harness.user()
            for number in 1...5 {
                let answer = try await harness.request(.post, "/api/posts", as: ada, json: #"{"title":"Kept \#(number)","content":"c"}"#)
                #expect(answer.status == .created)
                let id = try answer.post().id
                accepted.withLock { $0.append(id) }
            }
            // Let the relay hand the events to a producer that cannot reach the broker.
            try await Task.sleep(for: .seconds(2))
            stopping.withLock { $0 = .now }
        }
    }
}
