import Foundation
import PostlyModels
import PostlyPostgres
import Testing
import TestSupport

@testable import FederationService

/// What the fediverse reads of us: WebFinger, NodeInfo, actors, articles and outboxes, from
/// the events the service consumed.
@Suite(.serialized) struct DiscoveryTests {
    let ada = Author(userId: "ada-\(UUID().uuidString.prefix(8).lowercased())", name: "Ada Lovelace")

    /// A burst of requests for an actor without a key pair makes one pair, which all of them
    /// get: each made its own (a tenth of a second of a shared thread apiece) and kept one.
    @Test func aBurstForAnActorWithoutAKeyMakesOnePair() async throws {
        try await TestDatabase.with(poolSize: 4) { database in
            try await schema.apply(to: database)
            let made = Locked(0)
            let keys = ActorKeys(database: database) {
                made.withLock { $0 += 1 }
                return try ActorKeyPair.generate()
            }
            let pems = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<20 { group.addTask { try await keys.keyPair(of: "ada").publicKeyPEM } }
                return try await group.reduce(into: Set<String>()) { $0.insert($1) }
            }
            #expect(made.value == 1)
            #expect(pems.count == 1)
            let stored = try await database.query("SELECT public_key_pem FROM actor_keys WHERE actor_id = 'ada'")
            #expect(try stored.map { try $0.decode("public_key_pem", as: String.self) } == Array(pems))
        }
    }

    /// The making of a pair is shared, so it keeps no caller's deadline: the first caller's
    /// passing while the pair was made failed every caller waiting on it.
    @Test func aPairOutlivesTheDeadlineOfItsFirstCaller() async throws {
        try await TestDatabase.with(poolSize: 4) { database in
            try await schema.apply(to: database)
            let making = Locked(false)
            let keys = ActorKeys(database: database) {
                making.withLock { $0 = true }
                Thread.sleep(forTimeInterval: 0.3)
                return try ActorKeyPair.generate()
            }
            async let first = Database.$deadline.withValue(.now + .milliseconds(50)) { try await keys.keyPair(of: "ada") }
            #expect(try await eventually { making.value }, "the first caller started the making")
            let second = try await keys.keyPair(of: "ada")
            #expect(try await first.publicKeyPEM == second.publicKeyPEM)
        }
    }

    @Test func webfingerFindsAnAuthorByHandleAndById() async throws {
        try await FederationTestService.run { service in
            try await service.apply(userEvent(UserSnapshot(userId: ada.userId, name: ada.name, profilePicture: nil), sequence: 1, registered: true))
            let answer = try await service.get("/.well-known/webfinger?resource=acct:ada_lovelace@\(FederationTestService.host)")
            #expect(answer.status == .ok)
            #expect(answer.headers[.contentType]?.hasPrefix("application/jrd+json") == true)
            #expect(answer.headers[.accessControlAllowOrigin] == "*")
            let jrd = try #require(JSONValue.parse(Array(answer.body)))
            #expect(jrd["subject"]?.string == "acct:ada_lovelace@\(FederationTestService.host)")
            guard case .array(let links)? = jrd["links"] else { Issue.record("no links"); return }
            #expect(links.contains { $0["rel"]?.string == "self" && $0["href"]?.string == service.urls.actor(ada.userId) })

            let byId = try await service.get("/.well-known/webfinger?resource=acct:\(ada.userId)@\(FederationTestService.host)")
            #expect(JSONValue.parse(Array(byId.body))?["subject"]?.string == "acct:ada_lovelace@\(FederationTestService.host)")
            let byActor = try await service.get("/.well-known/webfinger?resource=\(service.urls.actor(ada.userId))")
            #expect(JSONValue.parse(Array(byActor.body))?["subject"]?.string == "acct:ada_lovelace@\(FederationTestService.host)")
            #expect(try await service.get("/.well-known/webfinger?resource=acct:ada_lovelace@elsewhere.example").status == .notFound)
            #expect(try await service.get("/.well-known/webfinger?resource=acct:nobody@\(FederationTestService.host)").status == .notFound)
            for garbled in ["", "?resource=ada", "?resource=acct:@\(FederationTestService.host)", "?resource=acct:ada"] {
                let answer = try await service.get("/.well-known/webfinger\(garbled)")
                #expect(answer.status == .badRequest && answer.json["code"] as? String == "invalid_query", "\(garbled)")
            }
        }
    }

    /// Mastodon resolves an actor's `preferredUsername` by WebFinger before it trusts the
    /// actor's key; the instance actor signs our fetches from servers that want them signed.
    @Test func webfingerFindsTheInstanceActorByItsHostHandleAndById() async throws {
        try await FederationTestService.run { service in
            let actor = try #require(JSONValue.parse(Array(try await service.get("/ap/actor").body)))
            let handle = try #require(actor["preferredUsername"]?.string)
            for resource in ["acct:\(handle)@\(FederationTestService.host)", service.urls.instanceActor] {
                let answer = try await service.get("/.well-known/webfinger?resource=\(resource)")
                #expect(answer.status == .ok, "\(resource)")
                let jrd = try #require(JSONValue.parse(Array(answer.body)))
                #expect(jrd["subject"]?.string == "acct:\(handle)@\(FederationTestService.host)")
                guard case .array(let links)? = jrd["links"] else { Issue.record("no links"); return }
                #expect(links.contains { $0["rel"]?.string == "self" && $0["href"]?.string == actor["id"]?.string }, "\(resource)")
            }
        }
    }

    @Test func handlesAreUniqueAndFixedAtFirstSight() async throws {
        try await FederationTestService.run { service in
            let other = Author(userId: "other-\(UUID().uuidString.prefix(8))", name: "Ada Lovelace")
            try await service.apply(
                userEvent(UserSnapshot(userId: ada.userId, name: ada.name, profilePicture: nil), sequence: 1),
                userEvent(UserSnapshot(userId: other.userId, name: other.name, profilePicture: nil), sequence: 1),
                userEvent(UserSnapshot(userId: ada.userId, name: "Countess of Lovelace", profilePicture: nil), sequence: 2))
            let first = JSONValue.parse(Array(try await service.get("/ap/users/\(ada.userId)").body))
            let second = JSONValue.parse(Array(try await service.get("/ap/users/\(other.userId)").body))
            #expect(first?["preferredUsername"]?.string == "ada_lovelace")
            #expect(first?["name"]?.string == "Countess of Lovelace")
            #expect(second?["preferredUsername"]?.string == "ada_lovelace_2")
        }
    }

    /// Every name without Latin letters makes the handle `user`: the next such author's handle
    /// costs the same few statements however many came before (each taken `user_N` cost two, in
    /// the consumer's transaction), and is free even where a suffix was taken out of turn.
    @Test func aHandleOfACrowdedBaseCostsTheSameHoweverManyShareIt() async throws {
        try await FederationTestService.run { service in
            // `User 5` takes `user_5` out of turn.
            try await service.apply(userEvent(UserSnapshot(userId: "u-user-5", name: "User 5", profilePicture: nil), sequence: 1))
            for n in 1...40 {
                try await service.apply(userEvent(UserSnapshot(userId: "u-\(n)", name: "Юлия", profilePicture: nil), sequence: 1))
            }
            let scans = try await service.harness.database.transaction { connection in
                // A difference: the counts may hold earlier transactions' not yet reported.
                let scansOfActors: SQL = "SELECT seq_scan + coalesce(idx_scan, 0) AS n FROM pg_stat_xact_user_tables WHERE relname = 'actors'"
                let before = try await connection.query(scansOfActors).first?.decode("n", as: Int.self) ?? 0
                try await ActorRepository.store(Author(userId: "u-next", name: "Юлия"), sequence: 1, in: connection)
                return (try await connection.query(scansOfActors).first?.decode("n", as: Int.self) ?? 0) - before
            }
            #expect(scans <= 10, "\(scans) scans of actors")
            let handle = try #require(try await ActorRepository(database: service.harness.database).actor(userId: "u-next")).handle
            #expect(handle.hasPrefix("user_"))
            #expect(try await service.count("SELECT count(*) FROM actors WHERE handle = \(handle)") == 1)
            #expect(try await service.count("SELECT count(DISTINCT handle) FROM actors") == 42)
        }
    }

    @Test func anActorIsAPersonWithItsPublicKey() async throws {
        try await FederationTestService.run { service in
            try await service.apply(userEvent(UserSnapshot(userId: ada.userId, name: ada.name, profilePicture: "https://example.com/ada.png"), sequence: 1))
            let answer = try await service.get("/ap/users/\(ada.userId)")
            #expect(answer.status == .ok)
            #expect(answer.headers[.contentType] == "application/activity+json; charset=utf-8")
            let person = try #require(JSONValue.parse(Array(answer.body)))
            let id = service.urls.actor(ada.userId)
            #expect(person["type"] == "Person" && person["id"]?.string == id)
            #expect(person["inbox"]?.string == id + "/inbox" && person["outbox"]?.string == id + "/outbox")
            #expect(person["endpoints"]?["sharedInbox"]?.string == "\(FederationTestService.base)/ap/inbox")
            #expect(person["publicKey"]?["id"]?.string == id + "#main-key" && person["publicKey"]?["owner"]?.string == id)
            #expect(person["publicKey"]?["publicKeyPem"]?.string?.hasPrefix("-----BEGIN PUBLIC KEY-----") == true)
            #expect(person["manuallyApprovesFollowers"] == false)
            #expect(person["icon"]?["url"]?.string == "https://example.com/ada.png")
            // The same key every time: it was made once and stored.
            let again = JSONValue.parse(Array(try await service.get("/ap/users/\(ada.userId)").body))
            #expect(again?["publicKey"] == person["publicKey"])
            #expect(try await service.get("/ap/users/nobody").status == .notFound)
            let instance = JSONValue.parse(Array(try await service.get("/ap/actor").body))
            #expect(instance?["type"] == "Application" && instance?["publicKey"]?["publicKeyPem"]?.string != nil)
        }
    }

    @Test func publishedPostsAreArticlesDraftsAreHiddenDeletedOnesTombstones() async throws {
        try await FederationTestService.run { service in
            let post = UUID().uuidString.lowercased()
            let draft = UUID().uuidString.lowercased()
            try await service.apply(
                postEvent(.created, id: post, title: "Crème brûlée", content: "Custard & sugar", author: ada, sequence: 1),
                postEvent(.created, id: draft, title: "Not yet", status: .draft, author: ada, sequence: 1))
            let answer = try await service.get("/ap/posts/\(post)")
            #expect(answer.status == .ok)
            let article = try #require(JSONValue.parse(Array(answer.body)))
            #expect(article["type"] == "Article" && article["name"] == "Crème brûlée")
            #expect(article["content"]?.string == "<p>Custard & sugar</p>\n")
            #expect(article["attributedTo"]?.string == service.urls.actor(ada.userId))
            // Where people read it, as the feeds link it (POST_URL_TEMPLATE), not the JSON API.
            #expect(article["url"]?.string == "\(FederationTestService.base)/posts/a-post")
            #expect(article["to"] == [.string(FederationURLs.publicAudience)])
            #expect(article["cc"] == [.string(service.urls.followers(ada.userId))])
            #expect(try await service.get("/ap/posts/\(draft)").status == .notFound)
            // Nor is it kept: only a public post is ever shown or sent.
            #expect(try await service.count("SELECT count(*) FROM articles WHERE post_id = \(draft)") == 0)
            #expect(try await service.get("/ap/posts/unknown").status == .notFound)

            try await service.apply(postEvent(.deleted, id: post, author: ada, sequence: 2), postEvent(.deleted, id: draft, status: .draft, author: ada, sequence: 2))
            let gone = try await service.get("/ap/posts/\(post)")
            #expect(gone.status == .gone)
            #expect(JSONValue.parse(Array(gone.body))?["type"] == "Tombstone")
            // A draft that never was public leaves no trace.
            #expect(try await service.get("/ap/posts/\(draft)").status == .notFound)
            // A late event of a deleted post does not bring it back.
            try await service.apply(postEvent(.updated, id: post, author: ada, sequence: 3))
            #expect(try await service.get("/ap/posts/\(post)").status == .gone)
        }
    }

    @Test func aPostUnpublishedAndThenDeletedIsATombstoneToo() async throws {
        try await FederationTestService.run { service in
            let post = UUID().uuidString.lowercased()
            try await service.apply(
                postEvent(.created, id: post, title: "Brief", author: ada, sequence: 1),
                postEvent(.updated, id: post, title: "Brief", status: .draft, author: ada, sequence: 2))
            #expect(try await service.get("/ap/posts/\(post)").status == .notFound)
            try await service.apply(postEvent(.deleted, id: post, status: .draft, author: ada, sequence: 3))
            let gone = try await service.get("/ap/posts/\(post)")
            #expect(gone.status == .gone && JSONValue.parse(Array(gone.body))?["type"] == "Tombstone")
        }
    }

    @Test func theOutboxPagesPublishedPostsNewestFirst() async throws {
        try await FederationTestService.run { service in
            for index in 1...23 {
                try await service.apply(postEvent(.created, id: "p\(index)-\(ada.userId)", title: "Post \(index)", author: ada, sequence: 1))
            }
            try await service.apply(postEvent(.created, id: "draft-\(ada.userId)", status: .draft, author: ada, sequence: 1))
            let collection = JSONValue.parse(Array(try await service.get("/ap/users/\(ada.userId)/outbox").body))
            #expect(collection?["type"] == "OrderedCollection" && collection?["totalItems"] == 23)
            let page = JSONValue.parse(Array(try await service.get("/ap/users/\(ada.userId)/outbox?page=2").body))
            guard case .array(let items)? = page?["orderedItems"] else { Issue.record("no items"); return }
            #expect(items.count == 3)
            #expect(items.allSatisfy { $0["type"] == "Create" && $0["object"]?["type"] == "Article" })
            #expect(page?["prev"] != nil && page?["next"] == nil)
            #expect(try await service.get("/ap/users/\(ada.userId)/outbox?page=0").status == .badRequest)
            let followers = JSONValue.parse(Array(try await service.get("/ap/users/\(ada.userId)/followers").body))
            #expect(followers?["totalItems"] == 0)
            let nodeInfo = JSONValue.parse(Array(try await service.get("/nodeinfo/2.1").body))
            #expect(nodeInfo?["software"]?["name"] == "postly" && nodeInfo?["usage"]?["localPosts"] == 23)
            #expect(nodeInfo?["protocols"] == ["activitypub"])
        }
    }
}
