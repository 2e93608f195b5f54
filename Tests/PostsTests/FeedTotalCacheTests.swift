import Foundation
import PostlyEvents
import PostlyModels
import PostlyPostgres
@testable import PostsService
import Testing
import TestSupport

/// The feed's total is kept for a moment; this instance's own writes drop it when they
/// commit, so the writer's next page counts its change.
@Suite struct FeedTotalCacheTests {
    static let feed = PostFilter(status: .published, authorId: nil)

    @Test func aFeedCountTakenWhileAWriteCommitsIsNotServedAfterTheCommit() async throws {
        try await TestDatabase.with { database in
            try await schema.apply(to: database)
            let repository = PostgresPostRepository(database: database)
            let writes = WriteUnit(database: database, producer: "posts", logger: testLogger)
            let ada = Caller(userId: "ada", name: "Ada")
            try await writes.write { transaction in
                _ = try await repository.create(
                    NewPost(title: "New", content: "Words.", status: .published, coverImage: nil), by: ada, in: transaction)
                // Another request counts the feed on another connection before this write commits.
                #expect(try await repository.list(Self.feed, page: PageRequest()).pagination.total == 0)
            }
            #expect(try await repository.list(Self.feed, page: PageRequest()).pagination.total == 1)
        }
    }
}
