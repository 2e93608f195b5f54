import Foundation
import PostlyImport
import PostlyModels
import Testing

@Suite struct ImportPlannerTests {
    @Test(arguments: ["relaxed", "canonical", "array"])
    func everyExportFormGivesTheSamePlan(form: String) throws {
        let relaxed = try FlaskDump.plan("relaxed"), other = try FlaskDump.plan(form)
        #expect(other.users.map(\.record) == relaxed.users.map(\.record))
        #expect(other.posts.map(\.record) == relaxed.posts.map(\.record))
        #expect(other.comments.map(\.record) == relaxed.comments.map(\.record))
        #expect(other.likes.map(\.record) == relaxed.likes.map(\.record))
        #expect(other.aliases == relaxed.aliases)
        #expect(other.report.fixes == relaxed.report.fixes)
        #expect(other.report.counts == relaxed.report.counts)
        #expect(other.badLines.isEmpty && other.report.rejected.isEmpty)
    }

    @Test func emailsAreTrimmedLowerCasedAndOneEmailIsOneUser() throws {
        let plan = try FlaskDump.plan("relaxed"), expected = try FlaskDump.expected()
        let users = Dictionary(uniqueKeysWithValues: plan.users.map { ($0.record.email, $0.record) })
        #expect(plan.users.count == expected.users)
        for login in expected.logins { #expect(users[login.email]?.userId == login.userId) }
        #expect(Set(plan.aliases.map { [$0.from, $0.to] }) == Set(expected.aliases.map { [$0.from, $0.to] }))
        #expect(plan.report.counts.users.merged == 2)
        // The Google document merged into the password one; a Google-only user is its own subject.
        #expect(users["alice@example.com"]?.googleSubject == "109876543210987654321")
        #expect(users["gina@gmail.com"]?.googleSubject == "108234567890123456789")
        #expect(users["gina@gmail.com"]?.passwordHash == nil)
        // Among two password documents the latest login wins.
        #expect(users["erin@example.com"]?.name == "Erin")
        #expect(plan.report.fixes.contains { $0.rule == "email_trimmed_lowercased" && $0.from == .string("  Alice@Example.COM ") })
    }

    /// Two documents whose emails differ only as the auth service does not tell them apart
    /// (case, full-width letters) are one user, the other's id an alias: auth would refuse
    /// the second as another user's email.
    @Test func emailsAreComparedAsTheAuthServiceComparesThem() throws {
        let users = try DumpFile(path: "users.json", bytes: Array("""
            {"userId": "u1", "name": "Ada", "email": "ADA@example.com", "password": "pbkdf2:sha256:1$s$h", "createdAt": "2024-01-01T00:00:00Z"}
            {"userId": "u2", "name": "Ada", "email": "\u{FF41}da@example.com", "password": "pbkdf2:sha256:1$s$h", "createdAt": "2024-01-02T00:00:00Z"}
            """.utf8))
        let empty = try DumpFile(path: "empty.json", bytes: [])
        let plan = ImportPlanner.plan(users: users, posts: empty, likes: empty, runId: "test")
        #expect(plan.users.map(\.record.email) == ["ada@example.com"])
        #expect(plan.aliases.count == 1)
        #expect(plan.report.rejected.isEmpty)
    }

    /// A NUL character, which MongoDB stores and PostgreSQL's text refuses, is taken out and
    /// reported: kept, it failed its whole batch, on every resume.
    @Test func nulCharactersAreTakenOutAndReported() throws {
        let users = try DumpFile(path: "users.json", bytes: Array(#"""
            {"userId": "u1", "name": "A\u0000da", "email": "ada@example.com", "password": "pbkdf2:sha256:1$s$h", "createdAt": "2024-01-01T00:00:00Z"}
            """#.utf8))
        let posts = try DumpFile(path: "posts.json", bytes: Array(#"""
            {"_id": "p1", "title": "Ti\u0000tle", "content": "Body", "author": {"userId": "u1", "name": "Ada"}, "slug": "title", "createdAt": "2024-01-02T00:00:00Z", "status": "published", "comments": [{"_id": "c1", "content": "\u0000Hi\u0000", "author": {"userId": "u1", "name": "Ada"}, "createdAt": "2024-01-03T00:00:00Z"}]}
            """#.utf8))
        let plan = ImportPlanner.plan(users: users, posts: posts, likes: try DumpFile(path: "likes.json", bytes: []), runId: "test")
        #expect(plan.users.map(\.record.name) == ["Ada"])
        #expect(plan.posts.map(\.record.title) == ["Title"])
        #expect(plan.comments.map(\.record.content) == ["Hi"])
        let removed = plan.report.fixes.filter { $0.rule == "nul_removed" }.map { "\($0.id) \($0.field)" }
        #expect(removed == ["u1 name", "p1 comments[0].content", "p1 title"])
        #expect(plan.report.rejected.isEmpty)
    }

    /// A Flask slug of kilobytes (Flask had no limit) is cut as a title's slug is, and reported:
    /// kept, it failed its whole batch of posts on every resume (past the unique index's row).
    @Test func aLongSlugIsCutAndReported() throws {
        let users = try DumpFile(path: "users.json", bytes: Array(#"""
            {"userId": "u1", "name": "Ada", "email": "ada@example.com", "password": "pbkdf2:sha256:1$s$h", "createdAt": "2024-01-01T00:00:00Z"}
            """#.utf8))
        let long = String(repeating: "very-long-", count: 400) + "title"
        let posts = try DumpFile(path: "posts.json", bytes: Array(#"""
            {"_id": "p1", "title": "Long", "content": "Body", "author": {"userId": "u1", "name": "Ada"}, "slug": "\#(long)", "createdAt": "2024-01-02T00:00:00Z", "status": "published"}
            {"_id": "p2", "title": "Long", "content": "Body", "author": {"userId": "u1", "name": "Ada"}, "slug": "\#(long)", "createdAt": "2024-01-03T00:00:00Z", "status": "published"}
            """#.utf8))
        let plan = ImportPlanner.plan(users: users, posts: posts, likes: try DumpFile(path: "likes.json", bytes: []), runId: "test")
        let cut = Slug.make(from: long)
        #expect(cut.count <= Slug.maximumLength && long.hasPrefix(cut))
        #expect(plan.posts.map(\.record.slug) == [cut, Slug.candidate(cut, attempt: 2)])
        #expect(plan.report.fixes.filter { $0.rule == "long_slug_cut" }.map(\.id) == ["p1", "p2"])
        #expect(plan.report.rejected.isEmpty)
    }

    /// A post the planner rejects (no content here, a second copy there) takes its comments
    /// with it, counted: they went missing from the report, which did not add up.
    @Test func theCommentsOfARejectedPostAreCounted() throws {
        let users = try DumpFile(path: "users.json", bytes: Array(#"""
            {"userId": "u1", "name": "Ada", "email": "ada@example.com", "password": "pbkdf2:sha256:1$s$h", "createdAt": "2024-01-01T00:00:00Z"}
            """#.utf8))
        let comment = #"{"_id": "CID", "content": "Hi", "author": {"userId": "u1", "name": "Ada"}, "createdAt": "2024-01-03T00:00:00Z"}"#
        func post(_ id: String, content: String, comments: [String]) -> String {
            #"{"_id": "\#(id)", "title": "T", "content": \#(content), "author": {"userId": "u1", "name": "Ada"}, "slug": "t-\#(id)", "createdAt": "2024-01-02T00:00:00Z", "status": "published", "comments": [\#(comments.map { comment.replacingOccurrences(of: "CID", with: $0) }.joined(separator: ","))]}"#
        }
        let posts = try DumpFile(path: "posts.json", bytes: Array([
            post("p1", content: "null", comments: ["c1", "c2"]), post("p2", content: #""Body""#, comments: ["c3"]),
            post("p2", content: #""Body""#, comments: ["c3", "c4"]),
        ].joined(separator: "\n").utf8))
        let plan = ImportPlanner.plan(users: users, posts: posts, likes: try DumpFile(path: "likes.json", bytes: []), runId: "test")
        #expect(plan.comments.map(\.record._id) == ["c3"])
        #expect(plan.report.counts.comments.read == 5 && plan.report.counts.comments.rejected == 4)
        #expect(plan.report.rejected.map { "\($0.collection.rawValue) \($0.id ?? "-") \($0.reason)" } == [
            "posts p1 missing title or content", "comments c1 its post was rejected", "comments c2 its post was rejected",
            "posts p2 duplicate _id", "comments c3 its post was rejected", "comments c4 its post was rejected",
        ])
    }

    /// A post too large for a batch is rejected, and what it carried is counted: its comments
    /// rejected with it, its likes as orphans (both went uncounted, and the report did not add up).
    @Test func whatARejectedPostCarriedIsCounted() throws {
        let users = try DumpFile(path: "users.json", bytes: Array(#"""
            {"userId": "u1", "name": "Ada", "email": "ada@example.com", "password": "pbkdf2:sha256:1$s$h", "createdAt": "2024-01-01T00:00:00Z"}
            """#.utf8))
        let content = String(repeating: "word ", count: 190_000)
        let posts = try DumpFile(path: "posts.json", bytes: Array(#"""
            {"_id": "p1", "title": "Long", "content": "\#(content)", "author": {"userId": "u1", "name": "Ada"}, "slug": "long", "createdAt": "2024-01-02T00:00:00Z", "status": "published", "comments": [{"_id": "c1", "content": "Hi", "author": {"userId": "u1", "name": "Ada"}, "createdAt": "2024-01-03T00:00:00Z"}]}
            """#.utf8))
        let likes = try DumpFile(path: "likes.json", bytes: Array(#"""
            {"postId": "p1", "userId": "u1", "createdAt": "2024-01-04T00:00:00Z"}
            """#.utf8))
        let plan = ImportPlanner.plan(users: users, posts: posts, likes: likes, runId: "test")
        #expect(plan.posts.isEmpty && plan.comments.isEmpty && plan.likes.isEmpty)
        #expect(plan.report.rejected.map { "\($0.collection.rawValue) \($0.id ?? "-")" } == ["posts p1", "comments c1"])
        #expect(plan.report.counts.comments.read == 1 && plan.report.counts.comments.rejected == 1)
        #expect(plan.report.counts.likes.read == 1 && plan.report.counts.likes.orphan == 1)
    }

    @Test func namesPicturesAndDatesAreNormalized() throws {
        let plan = try FlaskDump.plan("relaxed")
        let users = Dictionary(uniqueKeysWithValues: plan.users.map { ($0.record.email, $0.record) })
        #expect(users["bob@example.com"]?.name == "bob")
        #expect(users["gina@gmail.com"]?.profilePicture == nil)
        #expect(users["carol@example.com"]!.name.count > 100)
        // No createdAt in the source: the ObjectId's seconds. Microseconds truncated, never rounded.
        #expect(users["alice@example.com"]?.createdAt == "2026-01-01T00:00:10.000Z")
        #expect(users["alice@example.com"]?.lastLogin == "2026-02-14T10:20:30.123Z")
        #expect(users["carol@example.com"]?.lastLogin == "2026-02-15T09:00:00.999Z")
        #expect(users["bob@example.com"]?.lastLogin == "2026-02-14T11:00:00.000Z")
        let rules = Set(plan.report.fixes.filter { $0.collection == .users }.map(\.rule))
        #expect(rules.isSuperset(of: [
            "email_trimmed_lowercased", "empty_name_from_email", "name_over_limit_kept", "empty_to_null", "created_at_from_object_id",
            "date_to_utc_milliseconds", "same_email_merged",
        ]))
    }

    /// A date after the import (a Flask server whose clock ran ahead) is the import's time,
    /// reported: kept, the post stayed first in every feed, under a `Last-Modified` in the future.
    @Test func aDateAfterTheImportIsTheImportsTime() throws {
        let users = try DumpFile(path: "users.json", bytes: Array(#"""
            {"userId": "u1", "name": "Ada", "email": "ada@example.com", "password": "pbkdf2:sha256:1$s$h", "createdAt": "2024-01-01T00:00:00Z"}
            """#.utf8))
        let posts = try DumpFile(path: "posts.json", bytes: Array(#"""
            {"_id": "p1", "title": "Ahead", "content": "Body", "author": {"userId": "u1", "name": "Ada"}, "slug": "ahead", "createdAt": "2031-05-01T00:00:00Z", "updatedAt": {"$date": "2031-05-02T00:00:00Z"}, "status": "published", "comments": [{"_id": "c1", "content": "Hi", "author": {"userId": "u1", "name": "Ada"}, "createdAt": "2031-05-03T00:00:00Z"}]}
            {"_id": {"$oid": "7b0000000000000000000000"}, "title": "Ahead too", "content": "Body", "author": {"userId": "u1", "name": "Ada"}, "slug": "ahead-too", "status": "draft"}
            {"_id": "p3", "title": "Past", "content": "Body", "author": {"userId": "u1", "name": "Ada"}, "slug": "past", "createdAt": "2026-06-01T00:00:00.000Z", "status": "published"}
            """#.utf8))
        let now = Date(timeIntervalSince1970: 1_795_000_000.5)
        let plan = ImportPlanner.plan(users: users, posts: posts, likes: try DumpFile(path: "likes.json", bytes: []), runId: "test", now: now)
        let importTime = "2026-11-18T11:06:40.500Z"
        let byId = Dictionary(uniqueKeysWithValues: plan.posts.map { ($0.record._id, $0.record) })
        #expect(byId["p1"]?.createdAt == importTime && byId["p1"]?.updatedAt == importTime && byId["p1"]?.publishedAt == importTime)
        #expect(byId["7b0000000000000000000000"]?.createdAt == importTime)
        #expect(byId["p3"]?.createdAt == "2026-06-01T00:00:00.000Z")
        #expect(plan.comments.map(\.record.createdAt) == [importTime])
        let clamped = plan.report.fixes.filter { $0.rule == "future_date_to_import_time" }.map { "\($0.id) \($0.field)" }
        #expect(Set(clamped) == ["p1 createdAt", "p1 updatedAt", "7b0000000000000000000000 createdAt", "c1 createdAt"])
        #expect(plan.report.rejected.isEmpty)
    }

    @Test func passwordHashesAreCountedByWhatVerifiesThem() throws {
        let passwords = try FlaskDump.plan("relaxed").report.passwords
        let counted: [Int] = [passwords.scrypt, passwords.pbkdf2, passwords.bcrypt, passwords.unverifiable]
        #expect(counted == [2, 2, 0, 1])
        #expect(PasswordKind(hash: "scrypt:1048576:8:1$salt$00ff") == .scrypt)
        #expect(PasswordKind(hash: "scrypt:2097152:8:1$salt$00ff") == .unverifiable)
        #expect(PasswordKind(hash: "scrypt:32768:17:1$salt$00ff") == .unverifiable)
        #expect(PasswordKind(hash: "scrypt:32768:8:5$salt$00ff") == .unverifiable)
        #expect(PasswordKind(hash: "pbkdf2:sha512:1000000$salt$00ff") == .pbkdf2)
        #expect(PasswordKind(hash: "pbkdf2:md5:1000$salt$00ff") == .unverifiable)
        #expect(PasswordKind(hash: "sha1$salt$00ff") == .unverifiable)
        #expect(PasswordKind(hash: "plain$$x") == .unverifiable)
        #expect(PasswordKind(hash: "$2b$12$abcdefghijklmnopqrstuu") == .bcrypt)
    }

    @Test func postsKeepIdsViewsAndFlaskSlugsAndGetTheSpecificationsFixes() throws {
        let plan = try FlaskDump.plan("relaxed"), expected = try FlaskDump.expected()
        let posts = Dictionary(uniqueKeysWithValues: plan.posts.map { ($0.record._id, $0.record) })
        #expect(plan.posts.count == expected.posts.count)
        for want in expected.posts {
            let post = try #require(posts[want._id])
            #expect(post.slug == want.slug, "\(want._id)")
            #expect(post.status == want.status, "\(want._id)")
            #expect(post.views == want.views, "\(want._id)")
            #expect(post.createdAt == want.createdAt, "\(want._id)")
            #expect(post.author.userId == want.authorId, "\(want._id)")
            #expect(post.coverImage == want.coverImage, "\(want._id)")
            #expect(post.publishedAt == (want.status == "published" ? want.createdAt : nil), "\(want._id)")
        }
        let rules = Set(plan.report.fixes.filter { $0.collection == .posts }.map(\.rule))
        #expect(rules.isSuperset(of: [
            "unknown_status_to_draft", "published_at_from_created_at", "empty_slug_from_id", "duplicate_slug_suffixed",
            "cover_image_not_absolute_http_url", "views_not_a_count_to_zero", "likes_recounted_from_post_likes", "author_merged",
            "date_to_utc_milliseconds",
        ]))
    }

    @Test func commentsKeepTheirOrderAndOrphanAuthorsKeepTheirEmbeddedName() throws {
        let plan = try FlaskDump.plan("relaxed"), expected = try FlaskDump.expected()
        #expect(plan.comments.count == expected.comments)
        for post in expected.posts {
            #expect(plan.comments.filter { $0.record.postId == post._id }.map(\.record._id) == post.comments)
        }
        #expect(plan.report.counts.comments.orphan == expected.orphanComments)
        let orphan = try #require(plan.comments.first { $0.record.content == "From a user never imported" })
        #expect(orphan.record.author.name == "Ghost")
        #expect(plan.report.fixes.contains { $0.collection == .comments && $0.rule == "orphan_author" })
        // Erin's old account merged: its comment is hers now, under her current name.
        let moved = try #require(plan.comments.first { $0.record.content == "Erin's old account" })
        #expect(moved.record.author.name == "Erin")
    }

    @Test func likesAreDistinctPairsOfExistingPostsAndRecountThePosts() throws {
        let plan = try FlaskDump.plan("relaxed"), expected = try FlaskDump.expected()
        let counts = plan.report.counts.likes
        #expect(counts.read == expected.likes.read)
        #expect(plan.likes.count == expected.likes.imported)
        #expect(counts.duplicate == expected.likes.duplicate)
        #expect(counts.orphan == expected.likes.orphan)
        for post in expected.posts {
            #expect(plan.likes.filter { $0.record.postId == post._id }.count == post.likes, "\(post._id)")
        }
        let drift = try #require(plan.report.fixes.first { $0.rule == "likes_recounted_from_post_likes" && $0.id == expected.posts[0]._id })
        #expect(drift.from == .int(3) && drift.to == .int(2))
    }

    @Test func datesInEveryFormBecomeUTCMilliseconds() throws {
        #expect(LegacyTimestamp("2026-02-14T10:20:30.123456+00:00")?.text == "2026-02-14T10:20:30.123Z")
        #expect(LegacyTimestamp("2026-02-14T10:20:30.999999+00:00")?.text == "2026-02-14T10:20:30.999Z")
        #expect(LegacyTimestamp("2026-02-14T10:20:30+00:00")?.text == "2026-02-14T10:20:30.000Z")
        #expect(LegacyTimestamp("2026-02-14T10:20:30.5")?.text == "2026-02-14T10:20:30.500Z")  // naive: UTC
        #expect(LegacyTimestamp("2026-02-14T12:20:30.123+02:00")?.text == "2026-02-14T10:20:30.123Z")
        #expect(LegacyTimestamp("2026-02-14T05:20:30-0500")?.text == "2026-02-14T10:20:30.000Z")
        #expect(LegacyTimestamp("14/02/2026") == nil)
        let canonical = try ExtendedJSON.document(from: Array(#"{"d": {"$date": {"$numberLong": "1771064430123"}}}"#.utf8))
        let relaxed = try ExtendedJSON.document(from: Array(#"{"d": {"$date": "2026-02-14T10:20:30.123Z"}}"#.utf8))
        #expect(canonical["d"] == relaxed["d"])
        #expect(canonical["d"] == .date(milliseconds: 1_771_064_430_123))
    }

    @Test func extendedJSONWrappersResolve() throws {
        let document = try ExtendedJSON.document(from: Array(
            #"{"a": {"$oid": "6955B9650000000000000065"}, "b": {"$numberInt": "-5"}, "c": {"$numberLong": "9007199254740993"}, "d": {"$numberDouble": "3.0"}, "e": {"$numberDouble": "NaN"}, "f": {"x": 1}, "g": [true, null, "s"]}"#
                .utf8))
        #expect(document["a"] == .objectId("6955b9650000000000000065"))
        #expect(document["b"] == .int(-5))
        #expect(document["c"] == .int(9_007_199_254_740_993))
        #expect(document["d"] == .double(3))
        #expect(document["e"].map { if case .double(let d) = $0 { d.isNaN } else { false } } == true)
        #expect(document["f"] == .document(["x": .int(1)]))
        #expect(document["g"] == .array([.bool(true), .null, .string("s")]))
        #expect(throws: ExtendedJSONError.self) { try ExtendedJSON.document(from: Array(#"{"a": {"$oid": "xyz"}}"#.utf8)) }
        #expect(throws: ExtendedJSONError.self) { try ExtendedJSON.document(from: Array(#"{"a": {"$numberInt": "1.5"}}"#.utf8)) }
    }

    /// Dates outside the years 1-9999 are bad input (exit 2), not a crash of the tool or of
    /// the service it sends them to.
    @Test func datesOutsideTheYearsOneToNineThousandNineHundredNinetyNineAreRefused() {
        for milliseconds in ["-62167219200000", "9223372036854775807", "-9223372036854775808", "253402300800000"] {
            #expect(throws: ExtendedJSONError.self, "\(milliseconds)") {
                try ExtendedJSON.document(from: Array(#"{"d": {"$date": {"$numberLong": "\#(milliseconds)"}}}"#.utf8))
            }
        }
        #expect(LegacyTimestamp("0000-01-01T00:00:00Z") == nil)
        #expect(LegacyTimestamp("9999-12-31T23:59:59.999Z")?.text == "9999-12-31T23:59:59.999Z")
    }

    /// In a `--jsonArray` file, a bad element is that element's problem only: the others are
    /// read (one year-0 date lost the whole file before).
    @Test func aBadElementOfAnArrayLosesThatElementOnly() throws {
        let bytes = #"[{"a": 1}, {"d": {"$date": {"$numberLong": "-62167219200000"}}}, {"b": 2}, 3]"#
        let file = try DumpFile(path: "post_likes.json", bytes: Array(bytes.utf8))
        #expect(file.entries.map(\.line) == [1, 2, 3, 4])
        #expect(file.entries.map { (try? $0.document.get()) != nil } == [true, false, true, false])
        #expect(try file.entries[2].document.get() == ["b": .int(2)])
    }

    /// An array cut short (a copy interrupted) is bad input, whatever `--max-errors`: as one bad
    /// line it went through, and the posts of a cut posts file, their comments and likes were lost.
    @Test func anArrayThatIsNotJSONIsBadInput() throws {
        #expect {
            try DumpFile(path: "posts.json", bytes: Array(#"[{"a": 1},"#.utf8))
        } throws: { error in
            guard case ImportFailure.badInput(let reason) = error else { return false }
            return reason.hasPrefix("posts.json: not a JSON array: ")
        }
    }
}
