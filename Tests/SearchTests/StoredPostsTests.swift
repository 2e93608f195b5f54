import Foundation
import PostlyModels
import PostlyPostgres
import Testing
import TestSupport

@testable import SearchService

/// The posts an instance's consumer stores are handed to its follower (`StoredPosts`), which
/// applies them without reading them back: the index must end exactly as a load of the tables.
@Suite struct StoredPostsTests {
    @Test func whatAnInstanceStoredEndsInItsIndexAsTheTablesGiveIt() async throws {
        try await SearchTestService.run { service, _ in
            let ids = (0..<6).map { _ in UUID().uuidString.lowercased() }
            let grace = Author(userId: "grace", name: "Grace Hopper", profilePicture: "https://example.com/grace.png")
            // Commented on before its own event arrived (another topic): its comment is the table's.
            let comment = PostlyModels.Comment(id: "c1", postId: ids[1], content: "First!", author: grace, createdAt: Date())
            try await service.apply(
                Event(
                    producer: "comments", key: ids[1], sequence: 1, actorId: "grace",
                    data: .commentCreated(CommentSnapshot(comment: comment, postTitle: "Kayak", postAuthorId: "ada"))))
            try await service.apply(
                postEvent(.created, id: ids[0], title: "Crème brûlée, naïvely", content: "Ünïcödé 🚣 \"quoted\" <b>and</b> \\ back", sequence: 1),
                postEvent(.created, id: ids[1], title: "Kayak notes", sequence: 1),
                postEvent(.created, id: ids[2], title: "Drafted first", status: .draft, author: grace, sequence: 1),
                postEvent(.created, id: ids[3], title: "Soon a draft", sequence: 1),
                postEvent(.created, id: ids[4], title: "Soon deleted", sequence: 1),
                postEvent(.created, id: ids[5], title: "The", content: "", sequence: 1))
            try await service.apply(
                Event(
                    producer: "posts", key: ids[2], sequence: 2, actorId: "ada",
                    data: .postLiked(PostLike(postId: ids[2], postTitle: "Drafted first", postAuthorId: "grace", liker: grace, likes: 3))))
            try await service.apply(
                postEvent(.updated, id: ids[2], title: "Published at last", author: grace, likes: 3, sequence: 3),
                postEvent(.updated, id: ids[3], title: "Soon a draft", status: .draft, sequence: 2),
                postEvent(.deleted, id: ids[4], title: "Soon deleted", sequence: 2))

            var kept: IndexState?
            service.index.update { kept = $0 }
            let memory = try #require(kept)
            let tables = try await IndexRows(database: service.database).load(tables: memory.tables).state
            #expect(Set(memory.slots.keys) == [ids[0], ids[1], ids[2], ids[5]])
            #expect(Set(tables.slots.keys) == Set(memory.slots.keys))
            for id in ids {
                let inMemory = memory.slots[id].flatMap { memory.posts[Int($0)] }
                let inTables = tables.slots[id].flatMap { tables.posts[Int($0)] }
                #expect(inMemory == inTables, "post \(ids.firstIndex(of: id) ?? -1)")
            }
            #expect(memory.slots[ids[2]].flatMap { memory.posts[Int($0)] }?.likes == 3)
            #expect(memory.slots[ids[1]].flatMap { memory.posts[Int($0)] }?.comments.map(\.content) == ["First!"])
        }
    }

    /// What the follower applies for a post its own instance stored comes from the hand-off, not
    /// from the tables: a change made behind the log's back is not seen.
    @Test func aPostItsOwnInstanceStoredIsNotReadBack() async throws {
        try await SearchTestService.run { service, _ in
            // An index without a follower, so the hand-off waits for this test.
            let own = SearchIndex()
            let rows = IndexRows(database: service.database)
            let before = try await rows.load()
            let (published, drafted) = (UUID().uuidString.lowercased(), UUID().uuidString.lowercased())
            try await service.database.transaction { connection in
                try await SearchIndexer(index: own).apply(
                    [
                        postEvent(.created, id: published, title: "Kayak plans", sequence: 1),
                        postEvent(.created, id: drafted, title: "Kayak draft", status: .draft, sequence: 1),
                    ], in: connection)
            }
            try await service.database.execute("UPDATE documents SET likes = 7 WHERE id = \(published)")

            let handed = try await rows.changes(
                after: before.state.position, wordsAfter: 0, stored: own.stored.after(before.state.position, generation: before.generation),
                tables: before.state.tables)
            #expect(handed.posts.map(\.id) == [published])
            #expect(handed.posts.map(\.likes) == [0])
            #expect(handed.removed == [drafted])
            let read = try await rows.changes(after: before.state.position, wordsAfter: 0, tables: before.state.tables)
            #expect(read.posts.map(\.likes) == [7])
            #expect(read.removed == [drafted])
        }
    }

    @Test func theHandOffForgetsWhatIsAppliedAndWhatIsOfAnotherTable() {
        let stored = StoredPosts()
        stored.add([
            .init(generation: 1, position: 10): .hidden, .init(generation: 1, position: 11): .hidden,
            .init(generation: 2, position: 12): .hidden,
        ])
        #expect(Set(stored.after(10, generation: 1).keys) == [11])
        #expect(stored.after(11, generation: 1).isEmpty, "forgotten once applied")
        #expect(stored.after(0, generation: 2).isEmpty, "forgotten when another table was asked for")

        stored.add(Dictionary(uniqueKeysWithValues: (1...StoredPosts.limit).map { (StoredPosts.Key(generation: 3, position: Int64($0)), .hidden) }))
        stored.add([.init(generation: 3, position: 0): .hidden])
        #expect(stored.after(-1, generation: 3).count == StoredPosts.limit, "no more than the limit is kept")
    }

    /// Long posts are kept only up to `limitBytes` between them: a follower loading its index
    /// while the consumer works through a backlog of them held them all, their splits too.
    @Test func theHandOffHoldsLongPostsOnlyUpToItsBytes() throws {
        let content = String(repeating: "Paddling across the lake at dawn. ", count: 3_000)
        let split = try #require(TextSplit(content))
        let post = PostSnapshot.sample(id: "p", title: "Lake", content: content, status: .published, author: Author(userId: "ada", name: "Ada"), at: Date()).post
        let entry = StoredPosts.Stored.published(.init(post: post, likes: 0, publishedAt: nil, title: try #require(TextSplit("Lake")), content: split))
        let stored = StoredPosts()
        for position in 1...1_000 { stored.add([.init(generation: 1, position: Int64(position)): entry]) }
        let kept = stored.after(0, generation: 1).count
        #expect(kept > 0 && kept * StoredPosts.estimatedBytes(of: entry) <= StoredPosts.limitBytes)
        #expect(kept < 1_000)
        // What was applied makes room again.
        stored.add([.init(generation: 1, position: 1_001): entry])
        #expect(stored.after(Int64(kept), generation: 1).isEmpty)
        stored.add([.init(generation: 1, position: 1_002): entry])
        #expect(stored.after(Int64(kept), generation: 1).keys.sorted() == [1_002])
    }
}
