import Foundation
import PostlyImport
import PostlyModels
import Testing

@Suite struct ImportRunTests {
    let scratch: ScratchFolder

    init() throws { scratch = try ScratchFolder() }

    func run(users: String? = nil, posts: String? = nil, likes: String? = nil, maxErrors: Int = 100, dryRun: Bool = false) -> ImportRun {
        let fixture = { (name: String) in FlaskDump.folder.appendingPathComponent("relaxed/\(name).json").path }
        var run = ImportRun(
            usersPath: users ?? fixture("users"), postsPath: posts ?? fixture("posts"), likesPath: likes ?? fixture("post_likes"),
            targets: .init(auth: "http://auth.invalid", posts: "http://posts.invalid", comments: "http://comments.invalid", token: Secret("t")),
            statePath: scratch.path("state.json"), reportPath: scratch.path("report.json"))
        run.maxErrors = maxErrors
        run.dryRun = dryRun
        run.retry.firstDelay = .milliseconds(1)
        return run
    }

    func report() throws -> ImportReport {
        try JSONDecoder().decode(ImportReport.self, from: Data(contentsOf: URL(fileURLWithPath: scratch.path("report.json"))))
    }

    @Test func aBSONDumpIsRefusedNamingBsondump() throws {
        let bson = try scratch.write("users.bson", "\u{16}\0\0\0")
        #expect(throws: ImportFailure.badInput("users.bson: BSON dumps are not read; convert first: bsondump --outFile users.json users.bson")) {
            try run(users: bson).plan()
        }
        #expect(ImportFailure.badInput("x").exitCode == 2)
        #expect(ImportFailure.badInput("users.bson: BSON").description == "postly-import: users.bson: BSON")
    }

    @Test func aMissingFileIsBadInput() async throws {
        #expect(throws: ImportFailure.badInput("nowhere.json: no such file")) { try run(posts: scratch.path("nowhere.json")).plan() }
        #expect(await run(posts: scratch.path("nowhere.json")).run(transport: FakeServices()) == 2)
    }

    @Test func moreBadLinesThanMaxErrorsIsBadInputNamingTheFirst() async throws {
        let lines = (1...20).map { $0 == 17 || $0 == 18 ? "{not json" : #"{"_id": {"$oid": "6955b9650000000000000065"}, "postId": "x", "userId": "y"}"# }
        let likes = try scratch.write("post_likes.json", lines.joined(separator: "\n") + "\n")
        #expect(throws: ImportFailure.self) { try run(likes: likes, maxErrors: 1).plan() }
        do {
            _ = try run(likes: likes, maxErrors: 1).plan()
        } catch {
            #expect(error.description.hasPrefix("postly-import: 2 bad lines, more than --max-errors 1; the first: post_likes.json: line 17: invalid Extended JSON: "))
        }
        // Within the bound: imported, the bad lines rejected, exit 1.
        let plan = try run(likes: likes, maxErrors: 2).plan()
        #expect(plan.report.rejected.filter { $0.collection == .likes }.map(\.line) == [17, 18])
        #expect(await run(likes: likes, maxErrors: 1).run(transport: FakeServices()) == 2)
        #expect(await run(likes: likes, maxErrors: 2).run(transport: FakeServices()) == 1)
    }

    @Test func aDocumentOverOneMebibyteIsRejectedAndTheRestImported() async throws {
        let posts = try String(contentsOf: FlaskDump.folder.appendingPathComponent("relaxed/posts.json"), encoding: .utf8)
        let huge = #"{"_id": {"$oid": "6955b9650000000000000999"}, "title": "Huge", "content": ""# + String(repeating: "x", count: 1_150_000)
            + #"", "author": {"userId": "6955b90a0000000000000001"}, "createdAt": "2026-02-14T12:00:00+00:00", "status": "published"}"#
        let path = try scratch.write("posts.json", posts + huge + "\n")
        let services = FakeServices()
        #expect(await run(posts: path).run(transport: services) == 1)
        let report = try report()
        #expect(report.rejected.map(\.reason) == ["document larger than 1 MiB"])
        #expect(report.counts.posts.created == 7 && report.counts.posts.rejected == 1)
        #expect(services.requests.allSatisfy { $0.bytes < 1 << 20 })
    }

    @Test func aDryRunReportsWithoutSending() async throws {
        let services = FakeServices()
        #expect(await run(dryRun: true).run(transport: services) == 0)
        #expect(services.requests.isEmpty)
        let report = try report()
        #expect(report.counts.posts.read == 7 && report.counts.posts.created == 0 && !report.fixes.isEmpty)
    }

    @Test func collectionsGoInOrderAndASecondRunCreatesNothing() async throws {
        let services = FakeServices()
        #expect(await run().run(transport: services) == 0)
        #expect(services.requests.map { $0.url.split(separator: "/").last! } == ["users", "posts", "comments", "likes"])
        #expect(services.requests.map(\.url).first == "http://auth.invalid/internal/import/users")
        let first = try report()
        #expect(first.counts.users.created == 6 && first.counts.posts.created == 7 && first.counts.comments.created == 4 && first.counts.likes.created == 5)

        #expect(await run().run(transport: services) == 0)
        let second = try report()
        #expect(second.counts.users.created + second.counts.posts.created + second.counts.comments.created + second.counts.likes.created == 0)
        #expect(second.counts.posts.existing == 7 && second.runId != first.runId)
    }

    /// The comments service waits for a comment's post (503 until it arrives): the comments of a
    /// post the posts service refused are not sent, and are reported.
    @Test func theCommentsOfARefusedPostAreReportedNotSent() async throws {
        let plan = try run().plan()
        let refused = "6955b9650000000000000065"
        let theirs = plan.comments.filter { $0.record.postId == refused }
        #expect(!theirs.isEmpty)
        let like = try #require(plan.likes.first { $0.record.postId == refused })
        let services = FakeServices(refusing: [refused, "\(refused) \(like.record.userId)"])
        #expect(await run().run(transport: services) == 1)
        let sent = services.requests.filter { $0.url.hasSuffix("/comments") }.map(\.count).reduce(0, +)
        #expect(sent == plan.comments.count - theirs.count)
        let report = try report()
        #expect(Set(report.rejected.filter { $0.reason == "its post was rejected" }.compactMap(\.id)) == Set(theirs.map(\.record._id)))
        #expect(report.counts.comments.rejected == theirs.count)
        // A like refused, which the posts service names "postId userId", with its line.
        #expect(report.rejected.filter { $0.collection == .likes }.map(\.line) == [like.line])
    }

    @Test func aRunStoppedAfterABatchResumesAndCountsTheWholeImport() async throws {
        // Likes enough for three batches of 500.
        let likes = (0..<1_200).map { n in
            #"{"_id": {"$oid": "\#(String(format: "%024x", n))"}, "postId": "6955b9650000000000000065", "userId": "u\#(n)", "createdAt": "2026-02-14T12:00:00+00:00"}"#
        }
        let path = try scratch.write("post_likes.json", likes.joined(separator: "\n") + "\n")
        let broken = FakeServices(failFrom: 5)  // users, posts, comments, likes 1, likes 2 acknowledged
        var stopped = run(likes: path)
        #expect(await stopped.run(transport: broken) == 3)
        let state = try #require(try ImportState.load(from: scratch.path("state.json")))
        #expect(state.collection == .likes && state.batchNo == 2 && !state.done)
        #expect(state.byteOffset == likes[..<1000].reduce(0) { $0 + $1.utf8.count + 1 })

        let services = FakeServices()
        stopped = run(likes: path)
        #expect(await stopped.run(transport: services) == 0)
        #expect(services.requests.map(\.count) == [200])  // only the third batch of likes
        let report = try report()
        #expect(report.runId == state.runId)
        #expect(report.counts.likes.created == 1_200 && report.counts.users.created == 6 && report.counts.posts.created == 7)
    }

    /// Every post with comments refused, so no comment is sent; stopped among the likes and
    /// resumed, the left-out comments were counted and listed twice.
    @Test func aResumePastTheCommentsCountsTheLeftOutOnce() async throws {
        let likes = (0..<1_200).map { n in
            #"{"_id": {"$oid": "\#(String(format: "%024x", n))"}, "postId": "6955b9650000000000000065", "userId": "u\#(n)", "createdAt": "2026-02-14T12:00:00+00:00"}"#
        }
        let path = try scratch.write("post_likes.json", likes.joined(separator: "\n") + "\n")
        let plan = try run(likes: path).plan()
        let withComments = Set(plan.comments.map(\.record.postId))
        var stopped = run(likes: path)
        // Users, posts, likes 1 and 2 acknowledged.
        #expect(await stopped.run(transport: FakeServices(failFrom: 4, refusing: withComments)) == 3)
        stopped = run(likes: path)
        #expect(await stopped.run(transport: FakeServices(refusing: withComments)) == 1)
        let report = try report()
        #expect(report.counts.comments.rejected == plan.comments.count)
        #expect(report.rejected.filter { $0.collection == .comments }.count == plan.comments.count)
    }

    /// A report that cannot be written is bad input before anything is sent: found after the
    /// whole import was sent, the run's counts were lost (a rerun found the import done).
    @Test func aReportThatCannotBeWrittenStopsTheRunBeforeItSends() async throws {
        var unwritable = run()
        unwritable.reportPath = scratch.path("missing/report.json")
        let services = FakeServices()
        #expect(await unwritable.run(transport: services) == 2)
        #expect(services.requests.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: scratch.path("state.json")))
    }

    @Test func aRefusedTokenStopsWithExit3AfterFiveRetries() async throws {
        let services = FakeServices(failFrom: 0, failure: .status(401))
        var importer = Importer(plan: try run().plan(), targets: run().targets, transport: services, statePath: scratch.path("state.json"))
        importer.retry.firstDelay = .milliseconds(1)
        await #expect(throws: ImportFailure.self) { try await importer.run() }
        #expect(services.requests.count == 6)
        do {
            _ = try await importer.run()
        } catch {
            #expect(error.exitCode == 3)
            #expect(error.description.contains("answered 401"))
        }
    }

    @Test func batchesHoldAtMost500DocumentsAnd900KiB() throws {
        var plan = try run().plan()
        let post = plan.posts[0]
        plan.posts = (0..<1_100).map { n in
            var copy = post
            copy.record._id = String(format: "%024x", n)
            copy.record.content = String(repeating: "word ", count: n < 600 ? 10 : 1_000)  // the last 500 are 5 KB each
            return copy
        }
        let batches = ImportBatch.batches(of: plan, .posts)
        #expect(batches.allSatisfy { $0.count <= 500 && $0.body.count <= 900 * 1024 })
        #expect(batches.map(\.count).reduce(0, +) == 1_100)
        #expect(batches.count >= 4)
        // The aliases ride with the first batch only.
        #expect(String(decoding: batches[0].body, as: UTF8.self).contains(#""aliases":[{"#))
        #expect(String(decoding: batches[1].body, as: UTF8.self).contains(#""aliases":[]"#))
    }
}
