import Foundation
import HTTPTypes
import PostlyModels
import PostlyPostgres
import PostsService
import Synchronization
import Testing
import TestSupport

/// Likes stay exact under concurrency; views are counted without making reads wait.
@Suite struct LikesAndViewsTests {
    @Test func likeUnlikeAndCheckAnswerJSONAndAcceptEmptyJSONBodies() async throws {
        try await withPostsService { api in
            let ada = try await api.user()
            let bob = try await api.user("Bob")
            let post = try await api.create(as: ada)
            let json: HTTPFields = [.contentType: "application/json"]
            #expect(try await api.request(.get, "/api/posts/\(post.id)/like", as: bob).json["liked"] as? Bool == false)
            let liked = try await api.request(.post, "/api/posts/\(post.id)/like", as: bob, headers: json)
            #expect(liked.status == .ok && liked.json["message"] as? String != nil)
            #expect(try await api.request(.post, "/api/posts/\(post.id)/like", as: bob, headers: json).status == .ok)
            #expect(try await api.request(.get, "/api/posts/\(post.id)/like", as: bob).json["liked"] as? Bool == true)
            #expect(try await api.request(.get, "/api/posts/\(post.id)").post().likes == 1)
            let unliked = try await api.request(.delete, "/api/posts/\(post.id)/like", as: bob, headers: json)
            #expect(unliked.status == .ok && unliked.json["message"] as? String != nil)
            #expect(try await api.request(.delete, "/api/posts/\(post.id)/like", as: bob, headers: json).status == .ok)
            #expect(try await api.request(.get, "/api/posts/\(post.id)").post().likes == 0)
            #expect(try await api.request(.post, "/api/posts/\(post.id)/like").status == .unauthorized)
            #expect(try await api.request(.get, "/api/posts/\(post.id)/like").status == .unauthorized)
        }
    }

    @Test func fiftyUsersLikingAtOnceCountFifty() async throws {
        try await withPostsService { api in
            let ada = try await api.user()
            let post = try await api.create(as: ada)
            var users: [TestUser] = []
            for index in 0..<50 { users.append(try await api.user("User \(index)")) }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for user in users {
                    group.addTask {
                        let answer = try await api.request(.post, "/api/posts/\(post.id)/like", as: user)
                        #expect(answer.status == .ok)
                    }
                }
                try await group.waitForAll()
            }
            #expect(try await api.request(.get, "/api/posts/\(post.id)").post().likes == 50)
        }
    }

    @Test func oneUserLikingTenTimesAtOnceCountsOne() async throws {
        try await withPostsService { api in
            let ada = try await api.user()
            let bob = try await api.user("Bob")
            let post = try await api.create(as: ada)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<10 {
                    group.addTask { _ = try await api.request(.post, "/api/posts/\(post.id)/like", as: bob) }
                }
                try await group.waitForAll()
            }
            #expect(try await api.request(.get, "/api/posts/\(post.id)").post().likes == 1)
            let rows = try await api.database.query("SELECT count(*) AS n FROM likes")
            #expect(try rows[0].decode("n", as: Int.self) == 1)
        }
    }

    @Test func twoHundredConcurrentReadsCountTwoHundredViewsWithinFiveSeconds() async throws {
        try await withPostsService { api in
            let ada = try await api.user()
            let post = try await api.create(as: ada)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<200 {
                    group.addTask { _ = try await api.request(.get, "/api/posts/\(post.id)") }
                }
                try await group.waitForAll()
            }
            let stored = try await eventually(within: .seconds(5)) {
                try await api.database.query("SELECT views FROM posts WHERE id = \(post.id)")[0].decode("views", as: Int.self) == 200
            }
            #expect(stored)
            #expect(try await api.request(.get, "/api/posts/\(post.id)").post().views >= 201)
        }
    }

    @Test func anotherServicesLookIsNoView() async throws {
        try await withPostsService { api in
            let ada = try await api.user()
            let post = try await api.create(as: ada)
            for _ in 0..<3 { #expect(try await api.request(.get, "/api/posts/\(post.id)?countView=false").post().views == 0) }
            #expect(try await api.request(.get, "/api/posts/slug/\(post.slug)?countView=false").post().views == 0)
            #expect(try await api.request(.get, "/api/posts/\(post.id)?countView=maybe").status == .badRequest)
            #expect(try await api.request(.get, "/api/posts/\(post.id)").post().views == 1)
            #expect(try await api.request(.get, "/api/posts/\(post.id)?countView=false").post().views == 1)
        }
    }

    /// A flush whose connection is lost (here while it waits for a row another transaction
    /// holds) runs again at once: the last flush, at shutdown, has no next one to keep its
    /// views for.
    @Test func aFlushThatLosesItsConnectionRunsAgain() async throws {
        try await withPostsService { api in
            let ada = try await api.user()
            let post = try await api.create(as: ada)
            // A pool of its own: the harness's two connections hold the row and end the flush's.
            let pool = Database(configuration: api.database.configuration, logger: testLogger)
            let counter = ViewCounter(repository: PostgresPostRepository(database: pool), interval: .seconds(3600), logger: testLogger)
            for _ in 0..<5 { counter.record(post.id) }
            let flushing = try await api.database.transaction { holder in
                _ = try await holder.query("SELECT id FROM posts WHERE id = \(post.id) FOR UPDATE")
                let flushing = Task { await counter.flush() }
                #expect(try await api.database.endBackend(waitingForALockIn: "SET views") == 1)
                return flushing
            }
            await flushing.value
            #expect(counter.unwritten(post.id) == 0)
            #expect(try await api.database.query("SELECT views FROM posts WHERE id = \(post.id)")[0].decode("views", as: Int.self) == 5)
            await pool.close()
        }
    }

    /// Views being written still count: a read while the flush waits (here for a row another
    /// transaction holds) showed the post without them.
    @Test func viewsBeingWrittenStillCount() async throws {
        try await withPostsService { api in
            let ada = try await api.user()
            let post = try await api.create(as: ada)
            try await api.database.whileLocked(by: { try await $0.execute("SELECT id FROM posts WHERE id = \(post.id) FOR UPDATE") }) {
                for _ in 0..<5 { _ = try await api.request(.get, "/api/posts/\(post.id)") }
                #expect(try await eventually(within: .seconds(5)) { try await api.database.someoneWaitsForALock() })
                #expect(try await api.request(.get, "/api/posts/\(post.id)?countView=false").post().views == 5)
            }
            #expect(try await eventually(within: .seconds(5)) {
                try await api.database.query("SELECT views FROM posts WHERE id = \(post.id)")[0].decode("views", as: Int.self) == 5
            })
            // Once the flush has ended (a post read from the database between its commit and its
            // end counts the batch twice, for that moment).
            #expect(try await eventually(within: .seconds(5)) {
                try await api.request(.get, "/api/posts/\(post.id)?countView=false").post().views == 5
            })
        }
    }

    /// A flush that committed while its COMMIT's answer never came (the server froze during
    /// the commit) is settled as written: it was kept for the next flush, and counted twice.
    @Test func aFlushWhoseCommitAnswerWasLostCountsItsViewsOnce() async throws {
        try await withPostsService { api in
            let ada = try await api.user()
            let post = try await api.create(as: ada)
            var configuration = api.database.configuration
            configuration.answerTimeout = .seconds(1)
            let pool = Database(configuration: configuration, logger: testLogger)
            let counter = ViewCounter(repository: PostgresPostRepository(database: pool), interval: .seconds(3600), logger: testLogger)
            for _ in 0..<5 { counter.record(post.id) }
            // The COMMIT takes a second, in which its backend is stopped for three.
            try await api.database.slowCommits(of: "posts")
            let backend = FrozenBackend()
            let committing = Task {
                try await eventually(within: .seconds(10)) {
                    let rows = try await api.database.query(
                        """
                        SELECT pid FROM pg_stat_activity
                        WHERE datname = current_database() AND query = 'COMMIT' AND wait_event = 'PgSleep'
                        """)
                    guard let pid = try rows.first?.decode("pid", as: pid_t.self) else { return false }
                    try backend.stop(pid, resumingAfter: .seconds(3))
                    return true
                }
            }
            await counter.flush()
            #expect(try await committing.value, "the flush's COMMIT was frozen")
            await counter.flush()
            #expect(counter.unwritten(post.id) == 0)
            #expect(try await api.database.query("SELECT views FROM posts WHERE id = \(post.id)")[0].decode("views", as: Int.self) == 5)
            await backend.resumeAndWaitForItsEnd()
            await pool.close()
        }
    }

    @Test func viewsCountedBeforeAGracefulShutdownAreWritten() async throws {
        let postId = Mutex<String>("")
        try await withPostsService(viewFlushInterval: .seconds(3600), afterShutdown: { database in
            let id = postId.withLock { $0 }
            let views = try await database.query("SELECT views FROM posts WHERE id = \(id)")[0].decode("views", as: Int.self)
            #expect(views == 9)
        }) { api in
            let ada = try await api.user()
            let post = try await api.create(as: ada)
            postId.withLock { $0 = post.id }
            for _ in 0..<7 { try await api.request(.get, "/api/posts/\(post.id)") }
            // Not yet written (the interval is an hour), but shown to readers already.
            #expect(try await api.database.query("SELECT views FROM posts WHERE id = \(post.id)")[0].decode("views", as: Int.self) == 0)
            #expect(try await api.request(.get, "/api/posts/\(post.id)").post().views == 8)
            try await api.request(.get, "/api/posts/\(post.id)", headers: [.ifNoneMatch: "\"0\""])
        }
    }
}
