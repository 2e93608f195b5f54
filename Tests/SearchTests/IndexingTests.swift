import Foundation
import HummingbirdTesting
import PostlyKafka
import PostlyModels
import PostlyPostgres
import Synchronization
import Testing
import TestSupport

@testable import SearchService

/// What the events do to the index: only published posts are found, changes show at once,
/// stale and repeated events change nothing.
@Suite struct IndexingTests {
    @Test func draftsAreNeverFound() async throws {
        try await SearchTestService.run { service, client in
            let id = UUID().uuidString.lowercased()
            try await service.apply(postEvent(.created, id: id, title: "Secret kayak plans", status: .draft, sequence: 1))
            #expect(try await client.titles("kayak").isEmpty)
            #expect(try await client.search("kayak").totalCount == "0")
            // Nor kept: a draft's row holds none of its words, and publishing brings them all.
            let draft = try #require(
                try await service.database.query("SELECT title || content_text AS texts, post IS NULL AS bare FROM documents WHERE id = \(id)").first)
            #expect(try draft.decode("texts", as: String.self) == "")
            #expect(try draft.decode("bare", as: Bool.self))
            try await service.apply(postEvent(.updated, id: id, title: "Secret kayak plans", content: "Paddles at dawn.", sequence: 2))
            #expect(try await client.titles("paddles") == ["Secret kayak plans"])
        }
    }

    @Test func publishingUnpublishingEditingAndDeletingShowAtOnce() async throws {
        try await SearchTestService.run { service, client in
            let id = UUID().uuidString.lowercased()
            try await service.apply(postEvent(.created, id: id, title: "Kayak plans", status: .draft, sequence: 1))
            try await service.apply(postEvent(.updated, id: id, title: "Kayak plans", sequence: 2))
            #expect(try await client.titles("kayak") == ["Kayak plans"])
            try await service.apply(postEvent(.updated, id: id, title: "Canoe plans", sequence: 3))
            #expect(try await client.titles("kayak").isEmpty)
            #expect(try await client.titles("canoe") == ["Canoe plans"])
            try await service.apply(postEvent(.updated, id: id, title: "Canoe plans", status: .draft, sequence: 4))
            #expect(try await client.titles("canoe").isEmpty)
            try await service.apply(postEvent(.updated, id: id, title: "Canoe plans", sequence: 5))
            try await service.apply(postEvent(.deleted, id: id, title: "Canoe plans", sequence: 6))
            #expect(try await client.titles("canoe").isEmpty)
            // An older event arriving late does not bring it back.
            try await service.apply(postEvent(.updated, id: id, title: "Canoe plans", sequence: 5))
            #expect(try await client.titles("canoe").isEmpty)
        }
    }

    /// An answer shows the post's content as it is now, although answers keep the contents they
    /// showed (`ContentCache`).
    @Test func anEditedContentShowsAtOnce() async throws {
        try await SearchTestService.run { service, client in
            let id = UUID().uuidString.lowercased()
            try await service.apply(postEvent(.created, id: id, title: "Kayak plans", content: "Paddles at dawn.", sequence: 1))
            #expect(try await client.found("kayak").map(\.content) == ["Paddles at dawn."])
            try await service.apply(postEvent(.updated, id: id, title: "Kayak plans", content: "Paddles at dusk.", sequence: 2))
            #expect(try await client.found("kayak").map(\.content) == ["Paddles at dusk."])
            #expect(try await client.found("dusk").map(\.content) == ["Paddles at dusk."])
        }
    }

    /// A post edited since the index listed it (the index lags its tables by moments, by a
    /// load's length at worst) is shown as it is now, whole: never the title, excerpt and
    /// version the index listed with the content read since.
    @Test func aPostEditedSinceTheIndexListedItIsShownAsItIsNow() async throws {
        try await SearchTestService.run { service, _ in
            let id = try await service.publish("Kayak plans", content: "Paddles at dawn.")
            let lagging = SearchIndex()
            let follower = Task { try await IndexFollower(index: lagging, database: service.database, logger: testLogger).run() }
            try #require(try await eventually(within: .seconds(10)) { lagging.position == service.index.position })
            follower.cancel()
            _ = await follower.result
            try await service.apply(postEvent(.updated, id: id, title: "Kayak trips", content: "Paddles at dusk.", sequence: 2))
            let search = MemorySearchRepository(index: lagging, contents: ContentCache(bytes: 1 << 20), database: service.database)
            for includeHTML in [false, true] {
                let page = try await search.search("kayak", page: PageRequest(), includeHTML: includeHTML)
                let found = try PostlyJSON.decoder().decode([FoundPost].self, from: Data(page.body))
                #expect(found.map { [$0.title, $0.content, $0.excerpt, "\($0.version)"] } == [["Kayak trips", "Paddles at dusk.", "Paddles at dusk.", "2"]])
                #expect(found.map(\.highlights.title) == ["<mark>Kayak</mark> trips"])
                #expect(found.map(\.highlights.excerpt) == ["Paddles at dusk."])
                #expect(found.map { $0.contentHtml != nil } == [includeHTML])
                #expect(page.total == 1)
            }
        }
    }

    /// The tokens and lexemes of a text edited away are let go: the index is loaded again once
    /// its tables have outgrown the load, so an author rewriting a post with new words does not
    /// grow the index for ever. Searches go on meanwhile, each reading one index's tables: its
    /// words' numbers and its results' texts.
    @Test func anIndexWhoseTablesOutgrewTheLoadIsLoadedAgainWithoutTheWordsEditedAway() async throws {
        try await SearchTestService.run { service, _ in
            let own = SearchIndex()
            let follower = Task {
                try await IndexFollower(index: own, database: service.database, logger: testLogger, reloadAfterNewNumbers: 50, reloadsApart: .zero)
                    .run()
            }
            try #require(try await eventually(within: .seconds(10)) { own.isLoaded })
            let search = MemorySearchRepository(index: own, contents: ContentCache(bytes: 1 << 20), database: service.database)
            func found(_ word: String) async throws -> [FoundPost] {
                let page = try await search.search(word, page: PageRequest(), includeHTML: false)
                return try PostlyJSON.decoder().decode([FoundPost].self, from: Data(page.body))
            }
            func caughtUp() async throws {
                let newest = try #require(service.index.position)
                try #require(try await eventually(within: .seconds(10)) { (own.position ?? 0) >= newest })
            }
            /// 20 words no other round has: "qz" and the word's number in two letters (a word
            /// of four letters has no typos, so none is found by another's).
            func words(round: Int) -> String {
                (0..<20).map { word in
                    let number = round * 20 + word
                    return "qz" + String(UnicodeScalar(UInt8(97 + number / 26))) + String(UnicodeScalar(UInt8(97 + number % 26)))
                }.joined(separator: " ")
            }
            let (kayak, canoe) = (UUID().uuidString.lowercased(), UUID().uuidString.lowercased())
            try await service.apply(
                postEvent(.created, id: kayak, title: "Kayak notes", content: words(round: 0), sequence: 1),
                postEvent(.created, id: canoe, title: "Canoe trips", content: "Paddles at dawn.", sequence: 1))
            try await caughtUp()
            let searching = Task {
                var answers: Set<[String]> = []
                while !Task.isCancelled {
                    for word in ["kayak", "paddles"] {
                        answers.insert(try await found(word).map { "\($0.id): \($0.highlights.title) / \($0.highlights.excerpt)" })
                    }
                    try? await Task.sleep(for: .milliseconds(5))
                }
                return answers
            }
            for round in 1...15 {
                try await service.apply(
                    postEvent(.updated, id: kayak, title: "Kayak notes", content: words(round: round), sequence: Int64(round + 1)))
            }
            try await caughtUp()
            #expect(try await eventually(within: .seconds(10)) { (own.tables?.count ?? .max) < 300 }, "15 rounds of 40 new numbers let go")
            #expect(own.loadCount > 1)
            searching.cancel()
            // The canoe as it is (its excerpt ends at a word); the kayak with its content's first 15
            // words (none matched) as one of the rounds left it.
            let canoeAnswer = ["\(canoe): Canoe trips / <mark>Paddles</mark> at dawn"]
            let kayakAnswers = (0...15).map { round in
                ["\(kayak): <mark>Kayak</mark> notes / " + words(round: round).split(separator: " ").prefix(15).joined(separator: " ")]
            }
            let answers = try await searching.value
            #expect(answers.contains(canoeAnswer) && answers.contains(kayakAnswers[15]))
            #expect(answers.isSubset(of: Set(kayakAnswers + [canoeAnswer])), "\(answers.subtracting(kayakAnswers + [canoeAnswer]))")
            #expect(try await found(String(words(round: 15).prefix(4))).map(\.id) == [kayak])
            #expect(try await found(String(words(round: 1).prefix(4))).isEmpty)
            follower.cancel()
            _ = await follower.result
        }
    }

    /// A backlog arrives as one batch: its runs of creations and updates are stored in one
    /// statement each, and the result is the same as one event at a time.
    @Test func aBatchOfPostEventsEndsAsTheEventsOneAtATimeWould() async throws {
        try await SearchTestService.run { service, client in
            let (edited, published, deleted) = (UUID().uuidString.lowercased(), UUID().uuidString.lowercased(), UUID().uuidString.lowercased())
            let grace = Author(userId: "grace", name: "Grace Hopper")
            try await service.apply(
                postEvent(.created, id: edited, title: "Kayak plans", sequence: 1),
                postEvent(.created, id: published, title: "Kayak draft", status: .draft, author: grace, sequence: 1),
                postEvent(.updated, id: edited, title: "Kayak voyage", content: "Paddles and a tent.", sequence: 2),
                postEvent(.created, id: deleted, title: "Kayak rental", sequence: 1),
                postEvent(.deleted, id: deleted, title: "Kayak rental", sequence: 2),
                postEvent(.updated, id: published, title: "Kayak journal", author: grace, sequence: 2),
                // Stale: an older version of the edited post, after the newer one.
                postEvent(.updated, id: edited, title: "Kayak plans", sequence: 1))
            #expect(Set(try await client.titles("kayak")) == ["Kayak voyage", "Kayak journal"])
            #expect(try await client.titles("paddles") == ["Kayak voyage"])
            #expect(try await client.titles("plans").isEmpty)
            #expect(try await client.titles("rental").isEmpty)
            // Their words reached the lexicon with them: a prefix and a typo find them.
            #expect(try await client.titles("voya") == ["Kayak voyage"])
            #expect(try await client.titles("jornal") == ["Kayak journal"])
            #expect(try await client.found("journal").map(\.author.name) == ["Grace Hopper"])
        }
    }

    /// A backlog of long posts is stored a few megabytes of text a statement, in order: 64
    /// imported posts of 900 KiB made one parameter of 350 MB, past what a jsonb holds.
    @Test func aBatchOfLongPostsIsStoredInStatementsOfBoundedText() {
        func post(_ id: String, content: String) -> (snapshot: PostSnapshot, sequence: Int64) {
            guard case .postCreated(let snapshot) = postEvent(.created, id: id, title: "Long", content: content, sequence: 1).data else {
                fatalError("a creation")
            }
            return (snapshot, 1)
        }
        let long = String(repeating: "kayak ", count: 150_000)  // 900 KB
        let posts = (0..<64).map { post("p\($0)", content: long) }
        let statements = SearchIndexer.statements(of: posts)
        #expect(statements.flatMap { $0.map(\.snapshot.post.id) } == posts.map(\.snapshot.post.id))
        #expect(statements.count > 1)
        for statement in statements {
            #expect(statement.reduce(0) { $0 + SearchIndexer.textBytes(of: $1.snapshot) } <= SearchIndexer.statementTextBytes)
        }
        // A post past the bound on its own is a statement of its own.
        let huge = post("huge", content: String(repeating: "x", count: SearchIndexer.statementTextBytes + 1))
        let around = SearchIndexer.statements(of: [posts[0], huge, posts[1]])
        #expect(around.map { $0.map(\.snapshot.post.id) } == [["p0"], ["huge"], ["p1"]])
    }

    @Test func anAuthorsNewNameAndPictureShowOnEveryPostAndAreSearched() async throws {
        try await SearchTestService.run { service, client in
            let ada = Author(userId: "ada", name: "Ada Lovelace")
            try await service.publish("First kayak", author: ada)
            try await service.publish("Second kayak", author: ada)
            try await service.apply(userEvent(UserSnapshot(userId: "ada", name: "Ada King", profilePicture: "https://images.example.test/ada.png"), sequence: 2))
            let found = try await client.found("kayak")
            #expect(found.count == 2)
            #expect(found.allSatisfy { $0.author.name == "Ada King" && $0.author.profilePicture == "https://images.example.test/ada.png" })
            #expect(try await client.titles("king").count == 2)
            #expect(try await client.titles("lovelace").isEmpty)
            // A later post event naming the old name does not undo the user event.
            try await service.publish("Third kayak", author: ada)
            #expect(try await client.found("kayak").allSatisfy { $0.author.name == "Ada King" })
        }
    }

    /// A post's own events carry its likes: an import brings posts whose likes came with no
    /// like events, and they showed 0 here however often they were edited.
    @Test func aPostShowsTheLikesItsEventsCarry() async throws {
        try await SearchTestService.run { service, client in
            let id = UUID().uuidString.lowercased()
            try await service.apply(postEvent(.created, id: id, title: "Kayak draft", status: .draft, likes: 2, sequence: 1))
            try await service.apply(postEvent(.updated, id: id, title: "Kayak trip", likes: 37, sequence: 2))
            #expect(try await client.found("kayak").map(\.likes) == [37])
            try await service.apply(postEvent(.updated, id: id, title: "Kayak trip", likes: 38, sequence: 3))
            #expect(try await client.found("kayak").map(\.likes) == [38])
        }
    }

    @Test func resultsCarryTheirCommentsAndLikes() async throws {
        try await SearchTestService.run { service, client in
            let id = try await service.publish("Kayak trip")
            let grace = Author(userId: "grace", name: "Grace Hopper")
            let comment = PostlyModels.Comment(id: "c1", postId: id, content: "Lovely.", author: grace, createdAt: Date())
            let snapshot = CommentSnapshot(comment: comment, postTitle: "Kayak trip", postAuthorId: "ada")
            try await service.apply(Event(producer: "comments", key: id, sequence: 1, actorId: "grace", data: .commentCreated(snapshot)))
            try await service.apply(Event(
                producer: "posts", key: id, sequence: 2, actorId: "grace",
                data: .postLiked(PostLike(postId: id, postTitle: "Kayak trip", postAuthorId: "ada", liker: grace, likes: 1))))
            var result = try #require(try await client.found("kayak").first)
            #expect(result.comments.map(\.content) == ["Lovely."])
            #expect(result.commentsCount == 1)
            #expect(result.likes == 1)
            try await service.apply(Event(producer: "comments", key: id, sequence: 2, actorId: "grace", data: .commentDeleted(snapshot)))
            result = try #require(try await client.found("kayak").first)
            #expect(result.comments.isEmpty)
            #expect(result.commentsCount == 0)
        }
    }

    /// Comments of the same millisecond show in id order, as the post embeds them (they showed
    /// in the order their events arrived).
    @Test func commentsOfTheSameMomentShowInTheOrderThePostShowsThem() async throws {
        try await SearchTestService.run { service, client in
            let id = try await service.publish("Kayak trip")
            let grace = Author(userId: "grace", name: "Grace Hopper")
            let moment = Date(timeIntervalSince1970: 1_709_634_030.5)
            let ids = ["65f1a2b3c4d5e6f708192d03", "65f1a2b3c4d5e6f708192d01", "65f1a2b3c4d5e6f708192d02"]
            for (index, commentId) in ids.enumerated() {
                let comment = PostlyModels.Comment(id: commentId, postId: id, content: "Lovely.", author: grace, createdAt: moment)
                let snapshot = CommentSnapshot(comment: comment, postTitle: "Kayak trip", postAuthorId: "ada")
                try await service.apply(
                    Event(producer: "comments", key: id, sequence: Int64(index + 1), actorId: "grace", data: .commentCreated(snapshot)))
            }
            #expect(try await client.found("kayak").first?.comments.map(\.id) == ids.sorted())
        }
    }

    /// The sample events of `Tests/Fixtures/events/`, through the real consumer twice and out
    /// of order, end as they describe: the post published, renamed, liked, commented on and
    /// uncommented, then deleted.
    @Test func theSampleEventsAppliedTwiceAndOutOfOrderEndInTheRightState() async throws {
        try await SearchTestService.run { service, client in
            let producer = try KafkaProducer(configuration: service.kafka, logger: testLogger)
            try await withRunning([producer]) {
                func send(_ types: [EventType]) async throws {
                    for type in types {
                        let event = try EventFixtures.event(type)
                        _ = try await producer.send(KafkaOutgoingMessage(
                            topic: event.topic.rawValue, key: event.key, value: Array(try EventFixtures.data(type))))
                    }
                }
                // Across topics nothing is ordered: the user's rename and the comment before the
                // post, the older user event last. Then everything again, backwards.
                let allButDeletions: [EventType] = [.userUpdated, .commentCreated, .postCreated, .postUpdated, .postLiked, .userRegistered]
                try await send(allButDeletions)
                try await send(allButDeletions.reversed())
                // The topics are fetched in any interleaving: wait for the like and the comment.
                #expect(try await eventually {
                    let post = try await client.found("creme").first
                    return post?.likes == 1 && post?.commentsCount == 1
                })
                let post = try #require(try await client.found("creme").first)
                #expect(post.title == "Crème brûlée, done right")
                #expect(post.status == .published)
                #expect(post.author.name == "Ada King")
                #expect(post.author.profilePicture == "https://images.example.test/ada.png")
                #expect(post.comments.map(\.id) == ["7d6e3a0c-8f9b-4a1d-8e2f-3a4b5c6d7e8f"])

                try await send([.commentDeleted, .commentCreated, .commentDeleted])
                #expect(try await eventually { try await client.found("creme").first?.commentsCount == 0 })
                try await send([.postDeleted, .postUpdated, .postDeleted])
                #expect(try await eventually { try await client.titles("creme").isEmpty })
                try await Task.sleep(for: .milliseconds(500))
                #expect(try await client.titles("creme").isEmpty)
            }
        }
    }

    /// What an import emits is applied like any event: the post is found with its comment.
    @Test func importedEventsAreApplied() async throws {
        try await SearchTestService.run { service, client in
            let producer = try KafkaProducer(configuration: service.kafka, logger: testLogger)
            try await withRunning([producer]) {
                for type in EventFixtures.importedTypes {
                    var event = try EventFixtures.importedEvent(type)
                    // The sample post is a draft; an import brings published ones too.
                    if case .postCreated(var snapshot) = event.data {
                        snapshot.post.status = .published
                        snapshot.post.publishedAt = snapshot.post.createdAt
                        event.data = .postCreated(snapshot)
                    }
                    _ = try await producer.send(KafkaOutgoingMessage(topic: event.topic.rawValue, key: event.key, value: try PostlyJSON.encode(event)))
                }
                #expect(try await eventually { try await client.found("creme").first?.commentsCount == 1 })
            }
        }
    }

    /// A `post.updated` from before events carried the rendered post: search renders it
    /// itself, so it is found and shown as the posts service would show it.
    @Test func aPostEventWithoutTheRenderedPostIsStillApplied() async throws {
        try await SearchTestService.run { service, client in
            let producer = try KafkaProducer(configuration: service.kafka, logger: testLogger)
            try await withRunning([producer]) {
                let event = try EventFixtures.event(.postUpdated)
                _ = try await producer.send(KafkaOutgoingMessage(
                    topic: event.topic.rawValue, key: event.key, value: Array(try EventFixtures.legacyData(.postUpdated))))
                #expect(try await eventually { try await client.titles("torch") == ["Crème brûlée, done right"] })
                let found = try await client.execute(uri: "/api/posts/search?q=torch&formats=html", method: .get) { $0 }
                let results = try #require(JSONSerialization.jsonObject(with: Data(found.body.readableBytesView)) as? [[String: Any]])
                #expect(results.first?["contentHtml"] as? String == "<p>Custard, sugar, a torch.</p>\n<p>That is all it takes.</p>\n")
            }
        }
    }

    /// Through the real broker and consumer: each change searchable within a second of
    /// being sent.
    @Test func changesAreSearchableWithinASecondThroughTheBroker() async throws {
        try await SearchTestService.run { service, client in
            let producer = try KafkaProducer(configuration: service.kafka, logger: testLogger)
            try await withRunning([producer]) {
                func send(_ event: Event) async throws { try await service.send(event, with: producer) }
                func withinASecond(_ condition: () async throws -> Bool) async throws -> Bool {
                    try await eventually(within: .seconds(1), condition)
                }
                // The consumer joins its group first.
                let warmUp = UUID().uuidString.lowercased()
                try await send(postEvent(.created, id: warmUp, title: "Warm up", sequence: 1))
                #expect(try await eventually { try await client.titles("warm") == ["Warm up"] })

                let id = UUID().uuidString.lowercased()
                try await send(postEvent(.created, id: id, title: "Kayak plans", status: .draft, sequence: 1))
                try await send(postEvent(.updated, id: id, title: "Kayak plans", sequence: 2))
                #expect(try await withinASecond { try await client.titles("kayak") == ["Kayak plans"] }, "published")
                try await send(postEvent(.updated, id: id, title: "Canoe plans", sequence: 3))
                #expect(try await withinASecond { try await client.titles("canoe") == ["Canoe plans"] }, "edited")
                try await send(userEvent(UserSnapshot(userId: "ada", name: "Ada King", profilePicture: nil), sequence: 2))
                #expect(try await withinASecond { try await client.titles("king") == ["Canoe plans", "Warm up"] }, "renamed")
                try await send(postEvent(.updated, id: id, title: "Canoe plans", status: .draft, sequence: 4))
                #expect(try await withinASecond { try await client.titles("canoe").isEmpty }, "unpublished")
                try await send(postEvent(.updated, id: id, title: "Canoe plans", sequence: 5))
                #expect(try await withinASecond { try await client.titles("canoe") == ["Canoe plans"] }, "published again")
                try await send(postEvent(.deleted, id: id, title: "Canoe plans", sequence: 6))
                #expect(try await withinASecond { try await client.titles("canoe").isEmpty }, "deleted")
            }
        }
    }

    /// Two instances behind the gateway each have their own index in memory and consume a
    /// share of the events; each answers every change, whichever consumed it, within a second.
    @Test func twoInstancesBothAnswerEveryChangeWithinASecond() async throws {
        try await SearchTestService.runTwo { service, first, second in
            let producer = try KafkaProducer(configuration: service.kafka, logger: testLogger)
            try await withRunning([producer]) {
                func bothWithinASecond(_ condition: @Sendable (any TestClientProtocol) async throws -> Bool) async throws -> Bool {
                    let start = ContinuousClock.now
                    let firstAnswered = try await eventually(within: .seconds(1)) { try await condition(first) }
                    let secondAnswered = try await eventually(within: .seconds(1) - (ContinuousClock.now - start)) { try await condition(second) }
                    return firstAnswered && secondAnswered
                }
                // The consumers join the group one after the other, and the second one's joining
                // stops the group while the partitions move: wait until changes flow promptly.
                var posts = 0, promptInARow = 0
                for attempt in 0..<40 where promptInARow < 3 {
                    let word = "warm" + String(UnicodeScalar(UInt8(ascii: "a") + UInt8(attempt % 26))) + String(attempt / 26)
                    try await service.send(postEvent(.created, id: UUID().uuidString.lowercased(), title: "Up \(word)", sequence: 1), with: producer)
                    posts += 1
                    let prompt = try await bothWithinASecond { try await $0.titles(word) == ["Up \(word)"] }
                    promptInARow = prompt ? promptInARow + 1 : 0
                    if !prompt { _ = try await eventually { try await first.titles(word) == ["Up \(word)"] } }
                }
                try #require(promptInARow == 3, "changes flow promptly once both consumers joined")

                // Keys spread over the partitions, so each instance's consumer applies some.
                for number in 0..<6 {
                    let word = "kayak\(["alpha", "bravo", "charlie", "delta", "echo", "foxtrot"][number])"
                    try await service.send(postEvent(.created, id: UUID().uuidString.lowercased(), title: "Trip \(word)", sequence: 1), with: producer)
                    posts += 1
                    #expect(try await bothWithinASecond { try await $0.titles(word) == ["Trip \(word)"] }, "post \(number)")
                }
                try await service.send(userEvent(UserSnapshot(userId: "ada", name: "Ada King", profilePicture: nil), sequence: 2), with: producer)
                let all = String(posts)
                #expect(try await bothWithinASecond { try await $0.search("king").totalCount == all }, "renamed")
                // A typo finds it as soon as its exact word does: the lexicon changes in the same step.
                let id = UUID().uuidString.lowercased()
                try await service.send(postEvent(.created, id: id, title: "Quagmires", sequence: 1), with: producer)
                #expect(try await bothWithinASecond { try await $0.titles("quagmires") == ["Quagmires"] }, "exact")
                #expect(try await first.titles("quagmirse") == ["Quagmires"], "typo")
                #expect(try await second.titles("quagmirse") == ["Quagmires"], "typo")
                try await service.send(postEvent(.deleted, id: id, title: "Quagmires", sequence: 2), with: producer)
                #expect(try await bothWithinASecond { try await $0.titles("quagmires").isEmpty }, "deleted")
            }
        }
    }

    /// A reindex builds new tables from the topics beside the live ones and switches: search
    /// answers throughout, finds the same, keeps every word of the lexicon, and the live
    /// consumer goes on into the new tables.
    /// What nothing filters or joins on: ANALYZE leaves them out (migration 10), in the tables
    /// the migrations leave and in those a reindex builds.
    static let unfilteredColumns: Set<String> = [
        "title", "content_text", "post", "title_tokens", "title_lexemes", "content_tokens", "content_lexemes",
    ]

    static func columnsWithoutStatistics(in database: Database) async throws -> Set<String> {
        let rows = try await database.query(
            "SELECT attname::text AS name FROM pg_attribute WHERE attrelid = 'documents'::regclass AND attnum > 0 AND NOT attisdropped AND attstattarget = 0")
        return Set(try rows.map { try $0.decode("name", as: String.self) })
    }

    @Test func aReindexRebuildsTheIndexWhileSearchGoesOn() async throws {
        try await SearchTestService.run { service, client in
            let producer = try KafkaProducer(configuration: service.kafka, logger: testLogger)
            try await withRunning([producer]) {
                let first = UUID().uuidString.lowercased()
                try await service.send(postEvent(.created, id: first, title: "Kayak plans", sequence: 1), with: producer)
                try await service.send(userEvent(UserSnapshot(userId: "ada", name: "Ada King", profilePicture: nil), sequence: 2), with: producer)
                #expect(try await eventually { try await client.found("kayak").first?.author.name == "Ada King" })
                // Rows only the replay can bring back.
                try await service.database.execute("DELETE FROM authors")
                // A word no post has any more (edited away): the replay does not bring it back, but
                // the lexicon only grows, as instances that have it in memory count on.
                try await service.database.execute("INSERT INTO lexicon (word) VALUES ('portage')")

                let searching = Task {
                    var answers: [Int] = []
                    while !Task.isCancelled {
                        answers.append(Int(try await client.search("kayak").status.code))
                        try? await Task.sleep(for: .milliseconds(50))
                    }
                    return answers
                }
                #expect(try await Self.columnsWithoutStatistics(in: service.database) == Self.unfilteredColumns)
                let report = try await reindex(service.configuration, logger: testLogger, idleAfter: .seconds(1))
                searching.cancel()
                #expect(try await searching.value.allSatisfy { $0 == 200 })
                #expect(report.events >= 2)
                #expect(try await client.found("kayak").map(\.author.name) == ["Ada King"])
                let schemas = try await service.database.query(
                    "SELECT count(*) AS n FROM pg_namespace WHERE nspname IN ('search_rebuild', 'search_retired')")
                #expect(try schemas[0].decode("n", as: Int.self) == 0)
                #expect(try await service.database.query("SELECT 1 FROM lexicon WHERE word = 'portage'").count == 1)
                #expect(try await Self.columnsWithoutStatistics(in: service.database) == Self.unfilteredColumns)

                let second = UUID().uuidString.lowercased()
                try await service.send(postEvent(.created, id: second, title: "Canoe plans", sequence: 1), with: producer)
                #expect(try await eventually { try await client.titles("canoe") == ["Canoe plans"] })
            }
        }
    }

    /// A site whose events never pause for the idle wait: the reindex switches once the replay
    /// has consumed what the topics held (it waited for an idle moment that never came), takes
    /// nothing still arriving for a loss, and loses nothing written meanwhile.
    @Test func aReindexOnASiteThatNeverPausesEnds() async throws {
        try await SearchTestService.run { service, client in
            let producer = try KafkaProducer(configuration: service.kafka, logger: testLogger)
            try await withRunning([producer]) {
                for number in 0..<20 {
                    try await service.send(postEvent(.created, id: UUID().uuidString.lowercased(), title: "Kayak \(number)", sequence: 1), with: producer)
                }
                #expect(try await eventually { try await client.search("kayak").totalCount == "20" })
                let writing = Task {
                    var sent = 0
                    while !Task.isCancelled {
                        try await service.send(postEvent(.created, id: UUID().uuidString.lowercased(), title: "Canoe \(sent)", sequence: 1), with: producer)
                        sent += 1
                        try? await Task.sleep(for: .milliseconds(100))
                    }
                    return sent
                }
                let ended = Atomic(false)
                let reindexing = Task {
                    defer { ended.store(true, ordering: .relaxed) }
                    return try await reindex(service.configuration, logger: testLogger, idleAfter: .seconds(2))
                }
                let endedInTime = try await eventually(within: .seconds(60)) { ended.load(ordering: .relaxed) }
                writing.cancel()
                let sent = try await writing.value
                if !endedInTime { reindexing.cancel() }
                #expect(endedInTime, "the reindex ended while events kept coming")
                #expect(try await reindexing.value.events >= 20)
                // In the switched tables (the last ones sent may still be on their way), and then
                // in the index loaded from them.
                let expected = Set((0..<20).map { "Kayak \($0)" } + (0..<sent).map { "Canoe \($0)" })
                #expect(try await eventually(within: .seconds(10)) {
                    let rows = try await service.database.query("SELECT post->>'title' AS title FROM documents WHERE status = 'published'")
                    return Set(try rows.map { try $0.decode("title", as: String.self) }) == expected
                }, "\(sent) sent")
                let schemas = try await service.database.query("SELECT 1 FROM pg_namespace WHERE nspname IN ('search_rebuild', 'search_retired')")
                #expect(schemas.isEmpty)
                #expect(try await eventually(within: .seconds(10)) { try await client.search("canoe").totalCount == "\(sent)" })
                #expect(try await client.search("kayak").totalCount == "20")
            }
        }
    }

    /// A post the topics no longer hold (past their retention, or a broker that lost them) is
    /// not lost to a reindex: it refuses and switches nothing, unless told to accept the
    /// losses. It switched in whatever the topics held, an empty index after a broker restart.
    @Test func aReindexThatWouldLosePostsSwitchesNothing() async throws {
        try await SearchTestService.run { service, client in
            // Applied here, never sent: the topics do not have it.
            try await service.apply(postEvent(.created, id: UUID().uuidString.lowercased(), title: "Portage notes", sequence: 1))
            let producer = try KafkaProducer(configuration: service.kafka, logger: testLogger)
            try await withRunning([producer]) {
                // One the topics have, so each replay goes idle after it rather than waiting for a first.
                try await service.send(postEvent(.created, id: UUID().uuidString.lowercased(), title: "Canoe notes", sequence: 1), with: producer)
                #expect(try await eventually { try await client.titles("canoe") == ["Canoe notes"] })
                await #expect(throws: ReindexRefusal.self) {
                    try await reindex(service.configuration, logger: testLogger, idleAfter: .milliseconds(500))
                }
                #expect(try await client.titles("portage") == ["Portage notes"])
                let schemas = try await service.database.query("SELECT 1 FROM pg_namespace WHERE nspname = 'search_rebuild'")
                #expect(schemas.isEmpty)
                _ = try await reindex(service.configuration, logger: testLogger, idleAfter: .milliseconds(500), acceptingLosses: true)
                #expect(try await eventually { try await client.titles("portage").isEmpty })
                #expect(try await client.titles("canoe") == ["Canoe notes"])
            }
        }
    }

    /// A replay that brought nothing (a broker unreachable, or emptied) switches nothing even
    /// accepting losses: it switched in an empty index.
    @Test func aReindexWhoseReplayBroughtNothingSwitchesNothingEvenAcceptingLosses() async throws {
        try await SearchTestService.run { service, client in
            try await service.apply(postEvent(.created, id: UUID().uuidString.lowercased(), title: "Portage notes", sequence: 1))
            await #expect {
                try await reindex(service.configuration, logger: testLogger, idleAfter: .milliseconds(500), acceptingLosses: true)
            } throws: { ($0 as? ReindexRefusal)?.replayed == 0 }
            #expect(try await client.titles("portage") == ["Portage notes"])
        }
    }

    /// The topics hold a post's first state and not its later one: the replay has the post, as
    /// it was. Switched (the check asked only whether it was there), search lost the edit.
    @Test func aReindexWhoseReplayHasAnOlderPostSwitchesNothing() async throws {
        try await SearchTestService.run { service, client in
            let id = UUID().uuidString.lowercased()
            let producer = try KafkaProducer(configuration: service.kafka, logger: testLogger)
            try await withRunning([producer]) {
                try await service.send(postEvent(.created, id: id, title: "Canoe notes", sequence: 1), with: producer)
                #expect(try await eventually { try await client.titles("canoe") == ["Canoe notes"] })
                // Applied here, never sent: the topics do not have it.
                try await service.apply(postEvent(.updated, id: id, title: "Kayak notes", sequence: 2))
                #expect(try await eventually { try await client.titles("kayak") == ["Kayak notes"] })
                await #expect(throws: ReindexRefusal.self) {
                    try await reindex(service.configuration, logger: testLogger, idleAfter: .milliseconds(500))
                }
                #expect(try await client.titles("kayak") == ["Kayak notes"])
            }
        }
    }
}
