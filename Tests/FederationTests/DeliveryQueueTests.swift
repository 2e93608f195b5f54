import Foundation
import PostlyCurl
import PostlyPostgres
import PostlyService
import Testing
import TestSupport

@testable import FederationService

/// The deliveries table on a real database: workers of several instances never take the same
/// row, a host that keeps failing is left alone for a while, a given-up row stays dead.
@Suite(.serialized) struct DeliveryQueueTests {
    func enqueue(_ count: Int, host: String, in database: Database) async throws {
        try await database.transaction { connection in
            for index in 0..<count {
                let activity: JSONValue = ["id": .string("https://postly.example/ap/posts/\(index)#create-1"), "type": "Create"]
                try await DeliveryQueue.to("https://\(host)/users/\(index)/inbox", activity, signer: "ada", in: connection)
            }
        }
    }

    static let post = "https://postly.example/ap/posts/p1"
    let inboxes = ["https://a.example/inbox", "https://b.example/inbox"]

    /// Queues activities of one post, in order, named as in their ids ("create-1", "update-2"),
    /// to each of `inboxes`.
    func enqueue(_ activities: [String], to inboxes: [String], in database: Database) async throws {
        try await database.transaction { connection in
            for name in activities {
                let type = name.prefix { $0 != "-" }.capitalized
                let activity: JSONValue = ["id": .string("\(Self.post)#\(name)"), "type": .string(type), "object": ["id": .string(Self.post)]]
                for inbox in inboxes { try await DeliveryQueue.to(inbox, activity, signer: "ada", in: connection) }
            }
        }
    }

    /// The names of `claimed`, what follows the '#' of their ids, sorted.
    func names(_ claimed: [Delivery]) -> [String] {
        claimed.map { String($0.activityId.split(separator: "#").last ?? "") }.sorted()
    }

    /// The names of the deliveries in the queue, sorted.
    func queued(in database: Database) async throws -> [String] {
        try await database.query("SELECT split_part(activity_id, '#', 2) AS name FROM deliveries ORDER BY 1").map { try $0.decode("name") }
    }

    @Test func aPostsActivitiesReachAnInboxOneAtATimeInTheOrderTheyWereQueued() async throws {
        try await TestDatabase.with(poolSize: 2) { database in
            try await schema.apply(to: database)
            try await enqueue(["create-1", "update-2"], to: inboxes, in: database)
            // An Accept is about another object (its Follow), and goes at once.
            let accept: JSONValue = ["id": "https://postly.example/ap/users/ada#accepts/1", "type": "Accept", "object": ["id": "https://peer.example/follows/1"]]
            try await database.transaction { try await DeliveryQueue.to(inboxes[0], accept, signer: "ada", in: $0) }
            let queue = DeliveryQueue(database: database, clock: { Date() })
            // Claimed together, they were sent at once, and the Update could arrive first.
            let first = try await queue.claim(limit: 10)
            #expect(names(first) == ["accepts/1", "create-1", "create-1"])
            #expect(try await queue.claim(limit: 10).isEmpty)
            let creates = first.filter { $0.activityId.hasSuffix("#create-1") }.sorted { $0.inbox < $1.inbox }
            try await queue.delivered(creates[0])
            let update = try await queue.claim(limit: 10)
            #expect(names(update) == ["update-2"] && update.first?.inbox == inboxes[0])
            // A given-up delivery holds nothing back.
            #expect(try await queue.failed(creates[1], status: 404, error: "answered 404", retryAt: nil, pauseAfter: 10, pauseUntil: Date()) == .givenUp)
            #expect(names(try await queue.claim(limit: 10)) == ["update-2"])
        }
    }

    /// An Update carries the whole object, so the Updates still waiting are dropped; a Delete
    /// drops the waiting Creates and Updates (an inbox back after the Delete went out got the
    /// deleted post again, for good).
    @Test func aNewerUpdateOrADeleteDropsTheWaitingDeliveriesItMakesPointless() async throws {
        try await TestDatabase.with(poolSize: 2) { database in
            try await schema.apply(to: database)
            try await enqueue(["create-1", "update-2", "update-3"], to: inboxes, in: database)
            #expect(try await queued(in: database) == ["create-1", "create-1", "update-3", "update-3"])
            try await enqueue(["delete-4"], to: inboxes, in: database)
            #expect(try await queued(in: database) == ["delete-4", "delete-4"])
        }
    }

    /// A follower sending Follow after Follow (each with a new id) gets the Accept of the
    /// latest: each queued an Accept of its own, as many as the follower liked, and they held
    /// the workers. Another follower's Accept stays.
    @Test func aNewerAcceptOfTheSameFollowerAndActorDropsTheWaitingOnes() async throws {
        try await TestDatabase.with(poolSize: 2) { database in
            try await schema.apply(to: database)
            let documents = ActivityDocuments(urls: FederationURLs(permalink: Permalink(baseURL: "https://postly.example")))
            try await database.transaction { connection in
                for follow in 1...5 {
                    let accept = documents.accept(follow: "https://peer.example/follows/\(follow)", from: "https://peer.example/users/mallory", by: "ada")
                    try await DeliveryQueue.to(inboxes[0], accept, signer: "ada", in: connection)
                }
                let other = documents.accept(follow: "https://peer.example/follows/9", from: "https://peer.example/users/bob", by: "ada")
                try await DeliveryQueue.to(inboxes[0], other, signer: "ada", in: connection)
            }
            let follows = try await database.query("SELECT body FROM deliveries ORDER BY id").map {
                JSONValue.parse(Array(try $0.decode("body", as: String.self).utf8))?["object"]?["id"]?.string
            }
            #expect(follows == ["https://peer.example/follows/5", "https://peer.example/follows/9"])
        }
    }

    /// The Delete of a post whose Create is being sent goes after it: dropped, the Create was
    /// still on its way, and could arrive after the Delete and bring the post back. If it fails,
    /// it is dropped then, not tried again. A republish's Create goes after the Delete.
    @Test func aDeleteGoesAfterTheCreateBeingSentWhichIsDroppedIfItFails() async throws {
        try await TestDatabase.with(poolSize: 2) { database in
            try await schema.apply(to: database)
            try await enqueue(["create-1"], to: inboxes, in: database)
            let queue = DeliveryQueue(database: database, clock: { Date() })
            let sending = try await queue.claim(limit: 10)
            #expect(sending.count == 2)
            try await enqueue(["delete-2", "create-3"], to: inboxes, in: database)
            #expect(try await queue.claim(limit: 10).isEmpty)

            try await queue.delivered(sending[0])
            #expect(try await queue.failed(sending[1], status: 503, error: "answered 503", retryAt: Date(), pauseAfter: 10, pauseUntil: Date()) == .dropped)
            let deletes = try await queue.claim(limit: 10)
            #expect(names(deletes) == ["delete-2", "delete-2"])
            for delivery in deletes { try await queue.delivered(delivery) }
            #expect(names(try await queue.claim(limit: 10)) == ["create-3", "create-3"])
            #expect(try await queued(in: database) == ["create-3", "create-3"])
        }
    }

    /// A failure recorded while the Delete is being queued (its transaction not committed yet)
    /// still sees it: the Create is dropped, not left to retry ahead of the Delete for hours.
    @Test func aFailureRecordedWhileTheDeleteIsQueuedDropsTheCreate() async throws {
        try await TestDatabase.with(poolSize: 3) { database in
            try await schema.apply(to: database)
            try await enqueue(["create-1"], to: [inboxes[0]], in: database)
            let queue = DeliveryQueue(database: database, clock: { Date() })
            let sending = try #require(try await queue.claim(limit: 10).first)
            let (marked, mark) = AsyncStream.makeStream(of: Void.self)
            async let queuing: Void = database.transaction { connection in
                let delete: JSONValue = ["id": .string("\(Self.post)#delete-2"), "type": "Delete", "object": ["id": .string(Self.post)]]
                try await DeliveryQueue.to(inboxes[0], delete, signer: "ada", in: connection)
                mark.yield()
                try await Task.sleep(for: .milliseconds(300))
            }
            for await _ in marked { break }  // the Create is marked, and the mark not committed
            #expect(try await queue.failed(sending, status: 503, error: "answered 503", retryAt: Date(), pauseAfter: 10, pauseUntil: Date()) == .dropped)
            try await queuing
            let left = try await queued(in: database)
            #expect(left == ["delete-2"])
        }
    }

    /// An actor's Update supersedes its older ones still waiting, not the Accepts of its
    /// Follows (another object each, sent in no order with it); an Update queued again (its
    /// event repeated) does not supersede itself.
    @Test func anActorsUpdateSupersedesItsOlderUpdatesAloneAndNotItself() async throws {
        try await TestDatabase.with(poolSize: 2) { database in
            try await schema.apply(to: database)
            let actor = "https://postly.example/ap/users/ada"
            func queue(_ activity: JSONValue) async throws {
                try await database.transaction { try await DeliveryQueue.to(inboxes[0], activity, signer: "ada", in: $0) }
            }
            try await queue(["id": .string("\(actor)#update-1"), "type": "Update", "object": ["id": .string(actor), "type": "Person"]])
            try await queue(["id": .string("\(actor)#accepts/1"), "type": "Accept", "object": ["id": "https://peer.example/follows/1"]])
            let update: JSONValue = ["id": .string("\(actor)#update-2"), "type": "Update", "object": ["id": .string(actor), "type": "Person"]]
            try await queue(update)
            try await queue(update)
            #expect(try await queued(in: database) == ["accepts/1", "update-2"])
            let claimed = try await DeliveryQueue(database: database, clock: { Date() }).claim(limit: 10)
            #expect(names(claimed) == ["accepts/1", "update-2"])
        }
    }

    /// A Create queued by an instance of the older release, which names no object, joins the
    /// order all the same: a Delete queued by this release drops it.
    @Test func aDeliveryQueuedByTheOlderReleaseJoinsTheOrder() async throws {
        try await TestDatabase.with(poolSize: 2) { database in
            try await schema.apply(to: database)
            try await database.execute(
                """
                INSERT INTO deliveries (activity_id, inbox, host, signer, body, next_attempt_at)
                VALUES (\(Self.post + "#create-1"), \(inboxes[0]), 'a.example', 'ada', '{}', now())
                """)
            try await enqueue(["delete-2"], to: [inboxes[0]], in: database)
            #expect(try await queued(in: database) == ["delete-2"])
        }
    }

    /// A superseded delivery whose worker never said how it went (it died) is not sent again,
    /// and holds back the Delete behind it only until its lease ends.
    @Test func aSupersededDeliveryOfAWorkerThatDiedIsNotSentAgain() async throws {
        try await TestDatabase.with(poolSize: 2) { database in
            try await schema.apply(to: database)
            try await enqueue(["create-1"], to: [inboxes[0]], in: database)
            _ = try await DeliveryQueue(database: database, clock: { Date() }).claim(limit: 10)
            try await enqueue(["delete-2"], to: [inboxes[0]], in: database)
            let afterTheLease = DeliveryQueue(database: database, clock: { Date().addingTimeInterval(61) })
            #expect(names(try await afterTheLease.claim(limit: 10)) == ["delete-2"])
            try await afterTheLease.purge(before: Date())
            #expect(try await queued(in: database) == ["delete-2"])
        }
    }

    /// An attempt that outlived its lease, the row claimed again since, records nothing: had
    /// it deleted the row, the Update behind it would go while the new attempt is under way.
    @Test func anAttemptThatOutlivedItsLeaseRecordsNothing() async throws {
        try await TestDatabase.with(poolSize: 2) { database in
            try await schema.apply(to: database)
            try await enqueue(["create-1"], to: [inboxes[0]], in: database)
            let queue = DeliveryQueue(database: database, clock: { Date() })
            let late = try #require(try await queue.claim(limit: 10).first)
            let afterTheLease = DeliveryQueue(database: database, clock: { Date().addingTimeInterval(61) })
            let again = try #require(try await afterTheLease.claim(limit: 10).first)
            try await enqueue(["update-2"], to: [inboxes[0]], in: database)
            try await queue.delivered(late)
            #expect(try await queue.failed(late, status: 503, error: "answered 503", retryAt: Date(), pauseAfter: 10, pauseUntil: Date()) == .lapsed)
            #expect(try await afterTheLease.claim(limit: 10).isEmpty)
            try await afterTheLease.delivered(again)
            #expect(names(try await afterTheLease.claim(limit: 10)) == ["update-2"])
        }
    }

    @Test func concurrentClaimsNeverTakeTheSameDelivery() async throws {
        try await TestDatabase.with(poolSize: 4) { database in
            try await schema.apply(to: database)
            try await enqueue(100, host: "a.example", in: database)
            let queue = DeliveryQueue(database: database, clock: { Date() })
            async let first = queue.claim(limit: 60)
            async let second = queue.claim(limit: 60)
            let (one, two) = try await (first, second)
            #expect(one.count + two.count == 100)
            #expect(Set(one.map(\.id)).isDisjoint(with: two.map(\.id)))
            // Claimed rows are leased: nothing is due until the lease ends.
            #expect(try await queue.claim(limit: 100).isEmpty)
            let later = DeliveryQueue(database: database, clock: { Date().addingTimeInterval(61) })
            #expect(try await later.claim(limit: 100).count == 100)
        }
    }

    @Test func aHostFailingTenTimesInARowIsPausedAndAGivenUpDeliveryStaysDead() async throws {
        try await TestDatabase.with(poolSize: 2) { database in
            try await schema.apply(to: database)
            try await enqueue(10, host: "down.example", in: database)
            try await enqueue(1, host: "up.example", in: database)
            let queue = DeliveryQueue(database: database, clock: { Date() })
            let now = Date()
            for delivery in try await queue.claim(limit: 100) where delivery.host == "down.example" {
                #expect(try await queue.failed(delivery, status: 503, error: "answered 503", retryAt: now, pauseAfter: 10, pauseUntil: now.addingTimeInterval(600)) == .retrying)
            }
            let soon = DeliveryQueue(database: database, clock: { now.addingTimeInterval(61) })
            let due = try await soon.claim(limit: 100)
            #expect(due.map(\.host) == ["up.example"])  // down.example is paused for 10 minutes
            let afterPause = DeliveryQueue(database: database, clock: { now.addingTimeInterval(601) })
            // (up.example's lease has ended too: it was never acknowledged.)
            let resumed = try await afterPause.claim(limit: 100).filter { $0.host == "down.example" }
            #expect(resumed.count == 10 && resumed.allSatisfy { $0.attempts == 2 })

            try await queue.failed(resumed[0], status: 404, error: "answered 404", retryAt: nil, pauseAfter: 10, pauseUntil: now)
            let dead = try await database.query("SELECT count(*) AS n FROM deliveries WHERE dead").first?.decode("n", as: Int.self)
            #expect(dead == 1)
            let never = DeliveryQueue(database: database, clock: { now.addingTimeInterval(10 * 86400) })
            #expect(try await never.claim(limit: 100).count == 10)  // 9 of down.example and up.example: not the dead one
        }
    }

    /// An inbox that names its scheme's default port is on the same host as one that does not
    /// (paused with it, its posts waiting for the same Accepts); another port is another host.
    /// The deliveries queued before take the new name.
    @Test func anInboxNamingItsDefaultPortIsOnTheSameHost() async throws {
        try await TestDatabase.with(poolSize: 2) { database in
            try await Migrations(schema.migrations.filter { $0.version <= 10 }).apply(to: database)
            // As the previous release queued them.
            try await database.execute(
                """
                INSERT INTO deliveries (activity_id, inbox, host, signer, body, next_attempt_at)
                VALUES ('https://postly.example/ap/posts/p0#create-1', 'https://earlier.example:443/inbox', 'earlier.example:443', 'ada', '{}', now())
                """)
            try await database.execute(
                "INSERT INTO inbox_hosts (host, consecutive_failures) VALUES ('earlier.example:443', 3), ('earlier.example:4430', 3)")
            try await schema.apply(to: database)
            let inboxes = [
                "https://Down.example:443/inbox", "HTTPS://down.example/users/b/inbox", "http://down.example:80/inbox",
                "https://down.example:8443/inbox", "http://down.example:443/inbox", "https://down.example:4430/inbox",
            ]
            try await enqueue(["create-1"], to: inboxes, in: database)
            try await database.execute(
                """
                INSERT INTO followers (actor_id, follower_id, inbox, shared_inbox, follow_id)
                VALUES ('ada', 'https://down.example/users/c', 'https://down.example/users/c/inbox', 'https://down.example:443/shared',
                        'https://down.example/follows/1')
                """)
            try await database.transaction { connection in
                try await DeliveryQueue.toFollowers(of: "ada", ["id": "https://postly.example/ap/posts/p2#create-1", "type": "Create"], in: connection)
            }
            let claimed = try await DeliveryQueue(database: database, clock: { Date() }).claim(limit: 100)
            #expect(claimed.map(\.host).sorted() == [
                "down.example", "down.example", "down.example", "down.example", "down.example:443", "down.example:4430",
                "down.example:8443", "earlier.example",
            ])
            let hosts = try await database.query("SELECT host FROM inbox_hosts").map { try $0.decode("host", as: String.self) }
            #expect(hosts == ["earlier.example:4430"])
        }
    }

    /// Hosts and remote actors not heard of for the retention are forgotten (both tables only
    /// grew); a paused host, a follower and anything recent are kept, and a host that answers
    /// loses its run of failures at once.
    @Test func thePurgeForgetsHostsAndActorsNotHeardOfSinceTheRetention() async throws {
        try await TestDatabase.with(poolSize: 2) { database in
            try await schema.apply(to: database)
            for host in ["old.example", "paused.example", "recent.example", "answers.example"] {
                try await enqueue(1, host: host, in: database)
            }
            let now = Date()
            let weekAgo = DeliveryQueue(database: database, clock: { now.addingTimeInterval(-8 * 86400) })
            let queue = DeliveryQueue(database: database, clock: { now })
            for delivery in try await queue.claim(limit: 10) {
                let failing = delivery.host == "recent.example" || delivery.host == "answers.example" ? queue : weekAgo
                // paused.example fails twice, and is paused at its second failure.
                for _ in 0..<(delivery.host == "paused.example" ? 2 : 1) {
                    try await failing.failed(
                        delivery, status: 503, error: "answered 503", retryAt: now, pauseAfter: 2, pauseUntil: now.addingTimeInterval(600))
                }
                if delivery.host == "answers.example" { try await queue.delivered(delivery) }
            }
            try await database.execute(
                """
                INSERT INTO remote_actors (id, key_id, public_key_pem, inbox, fetched_at) VALUES
                    ('https://x.example/old', 'https://x.example/old#key', 'pem', 'https://x.example/old/inbox', now() - interval '8 days'),
                    ('https://x.example/follower', 'https://x.example/follower#key', 'pem', 'https://x.example/f/inbox', now() - interval '8 days'),
                    ('https://x.example/recent', 'https://x.example/recent#key', 'pem', 'https://x.example/r/inbox', now())
                """)
            try await database.execute(
                """
                INSERT INTO followers (actor_id, follower_id, inbox, follow_id)
                VALUES ('ada', 'https://x.example/follower', 'https://x.example/f/inbox', 'f1')
                """)
            #expect(try await database.query("SELECT host FROM inbox_hosts ORDER BY host").map { try $0.decode("host", as: String.self) }
                == ["old.example", "paused.example", "recent.example"])
            try await queue.purge(before: now.addingTimeInterval(-7 * 86400))
            #expect(try await database.query("SELECT host FROM inbox_hosts ORDER BY host").map { try $0.decode("host", as: String.self) }
                == ["paused.example", "recent.example"])
            #expect(try await database.query("SELECT id FROM remote_actors ORDER BY id").map { try $0.decode("id", as: String.self) }
                == ["https://x.example/follower", "https://x.example/recent"])
        }
    }

    /// A post's Create waits for an earlier Accept of its author to the same host: Mastodon
    /// drops a post from an actor its users do not follow yet, so one published as someone
    /// followed was lost to them. Another author's post, and another host's, go at once; a
    /// later Accept, or one given up, holds nothing; an Accept waiting for its retry is due at
    /// once when its host answers another delivery (its posts waited hours after it was back).
    @Test func aPostWaitsForItsAuthorsPendingAcceptToTheSameHost() async throws {
        try await TestDatabase.with(poolSize: 2) { database in
            try await schema.apply(to: database)
            let documents = ActivityDocuments(urls: FederationURLs(permalink: Permalink(baseURL: "https://postly.example")))
            func accept(_ follower: String, in connection: DatabaseConnection) async throws {
                let accept = documents.accept(follow: "https://a.example/follows/\(follower)", from: "https://a.example/users/\(follower)", by: "ada")
                try await DeliveryQueue.to("https://a.example/users/\(follower)/inbox", accept, signer: "ada", in: connection)
            }
            func create(_ post: String, by signer: String, to host: String, in connection: DatabaseConnection) async throws {
                let create: JSONValue = [
                    "id": .string("https://postly.example/ap/posts/\(post)#create-1"), "type": "Create",
                    "object": ["id": .string("https://postly.example/ap/posts/\(post)")],
                ]
                try await DeliveryQueue.to("https://\(host)/inbox", create, signer: signer, in: connection)
            }
            try await database.transaction { connection in
                try await accept("f", in: connection)
                try await create("p1", by: "ada", to: "a.example", in: connection)
                try await create("p2", by: "bob", to: "a.example", in: connection)
                try await create("p3", by: "ada", to: "b.example", in: connection)
                try await create("p5", by: "bob", to: "a.example", in: connection)
                try await accept("g", in: connection)
                try await create("p4", by: "ada", to: "a.example", in: connection)
            }
            func described(_ claimed: [Delivery]) -> Set<String> {
                Set(claimed.map { $0.activityId.contains("#accepts/") ? "accept \($0.inbox)" : $0.activityId })
            }
            let now = Date().addingTimeInterval(1)
            let queue = DeliveryQueue(database: database, clock: { now })
            let first = try await queue.claim(limit: 10)
            let post = { (name: String) in "https://postly.example/ap/posts/\(name)#create-1" }
            #expect(described(first) == [
                "accept https://a.example/users/f/inbox", "accept https://a.example/users/g/inbox", post("p2"), post("p3"), post("p5"),
            ])
            let claimed = Dictionary(uniqueKeysWithValues: first.map { ($0.activityId.contains("#accepts/") ? $0.inbox : $0.activityId, $0) })
            func fail(_ delivery: Delivery?, _ status: Int, retryAt: Date?) async throws {
                try await queue.failed(
                    try #require(delivery), status: status, error: "answered \(status)", retryAt: retryAt, pauseAfter: 10, pauseUntil: now)
            }
            // g's Accept is given up; f's fails as its host is down, retried in two hours.
            try await fail(claimed["https://a.example/users/g/inbox"], 404, retryAt: nil)
            try await fail(claimed["https://a.example/users/f/inbox"], 503, retryAt: now.addingTimeInterval(7200))
            #expect(try await queue.claim(limit: 10).isEmpty)
            // The host answers bob's p2 (refused): f's Accept is due at once; the posts still wait.
            try await fail(claimed[post("p2")], 401, retryAt: nil)
            let retried = try await queue.claim(limit: 10)
            #expect(described(retried) == ["accept https://a.example/users/f/inbox"])
            try await fail(retried.first, 503, retryAt: now.addingTimeInterval(7200))
            #expect(try await queue.claim(limit: 10).isEmpty)
            // The host takes bob's p5: the same.
            try await queue.delivered(try #require(claimed[post("p5")]))
            let again = try await queue.claim(limit: 10)
            #expect(described(again) == ["accept https://a.example/users/f/inbox"])
            try await queue.delivered(try #require(again.first))
            #expect(described(try await queue.claim(limit: 10)) == [post("p1"), post("p4")])
        }
    }

    /// The worker hands back the attempt of a delivery whose name it could not look up (its
    /// resolver busy with other names), and holds nothing against its host.
    @Test func theWorkerPutsBackADeliveryItsResolverHadNoTimeFor() async throws {
        try await TestDatabase.with(poolSize: 2) { database in
            try await schema.apply(to: database)
            try await enqueue(1, host: "busy.example", in: database)
            let queue = DeliveryQueue(database: database, clock: { Date() })
            var http = OutboundHTTP(client: CurlHTTPClient(logger: testLogger), allowPrivateNetworks: false, timeout: .seconds(1))
            http.resolver = HostResolver(threads: 1, timeout: .milliseconds(100), pendingLimit: 0) { _ in ["198.51.100.7"] }
            let configuration = FederationConfiguration(environment: ["PUBLIC_BASE_URL": FederationTestService.base, "FEDERATION_POLL_MS": "50"])
            let urls = FederationURLs(permalink: Permalink(baseURL: FederationTestService.base))
            let worker = DeliveryWorker(
                queue: queue, http: http, keys: ActorKeys(database: database), urls: urls, configuration: configuration, logger: testLogger)
            let running = Task { try await worker.run() }
            // Leased, it is `sending` with its attempt spent until the lease ends.
            let putBack = try await eventually {
                try await !database.query("SELECT 1 FROM deliveries WHERE NOT sending AND attempts = 0 AND NOT dead AND next_attempt_at > now()").isEmpty
            }
            running.cancel()
            _ = await running.result
            #expect(putBack)
            #expect(try await database.query("SELECT host FROM inbox_hosts").isEmpty)
        }
    }

    /// An answer that is not the host's failure ends its run of failures, not a pause other
    /// failures began: a 401 from a host paused as overloaded ended the pause at once.
    @Test func anAnswerEndsAHostsRunButNotItsPause() async throws {
        try await TestDatabase.with(poolSize: 2) { database in
            try await schema.apply(to: database)
            try await enqueue(4, host: "busy.example", in: database)
            let now = Date().addingTimeInterval(1)
            let queue = DeliveryQueue(database: database, clock: { now })
            let claimed = try await queue.claim(limit: 10).sorted { $0.id < $1.id }
            try #require(claimed.count == 4)
            for (delivery, status) in zip(claimed.prefix(3), [503, 503, 401]) {
                try await queue.failed(
                    delivery, status: status, error: "answered \(status)", retryAt: status == 401 ? nil : now, pauseAfter: 2,
                    pauseUntil: now.addingTimeInterval(600))
            }
            #expect(try await DeliveryQueue(database: database, clock: { now.addingTimeInterval(61) }).claim(limit: 10).isEmpty)
            #expect(try await database.query("SELECT consecutive_failures AS n FROM inbox_hosts").first?.decode("n", as: Int.self) == 0)
        }
    }

    /// A host failing for a week without answering once is taken for gone: a delivery to it
    /// is given up at its first failure (each was tried for three days), until it answers: a
    /// delivery, or any answer that is not the host's failure, begins a new run, as does a row
    /// an instance of the previous release reset to 0 failures.
    @Test func aHostFailingForAWeekIsTakenForGoneUntilItAnswers() async throws {
        try await TestDatabase.with(poolSize: 2) { database in
            try await schema.apply(to: database)
            try await enqueue(8, host: "gone.example", in: database)
            let now = Date()
            let weekAgo = DeliveryQueue(database: database, clock: { now.addingTimeInterval(-8 * 86400) })
            let queue = DeliveryQueue(database: database, clock: { now })
            let claimed = try await queue.claim(limit: 10).sorted { $0.id < $1.id }
            try #require(claimed.count == 8)
            func fail(_ delivery: Delivery, at queue: DeliveryQueue, status: Int? = nil) async throws -> DeliveryQueue.FailureRecord {
                try await queue.failed(delivery, status: status, error: "failed", retryAt: now, pauseAfter: 100, pauseUntil: now)
            }
            #expect(try await fail(claimed[0], at: weekAgo) == .retrying)
            #expect(try await fail(claimed[1], at: queue) == .givenUp)
            try await queue.delivered(claimed[2])
            #expect(try await fail(claimed[3], at: queue) == .retrying)

            try await database.execute("DELETE FROM inbox_hosts")
            #expect(try await fail(claimed[4], at: weekAgo) == .retrying)
            #expect(try await fail(claimed[5], at: queue, status: 404) == .retrying)
            #expect(try await fail(claimed[6], at: queue) == .retrying)

            try await database.execute(
                "UPDATE inbox_hosts SET consecutive_failures = 0, failing_since = \(now.addingTimeInterval(-8 * 86400))")
            #expect(try await fail(claimed[7], at: queue) == .retrying)
        }
    }

    /// A delivery whose name could not be looked up (our resolver busy) is handed its attempt
    /// back and is due again soon, with nothing held against its host: each busy round cost an
    /// attempt, and the retry policy gave deliveries up without a try.
    @Test func aDeliveryPutBackKeepsItsAttemptsAndItsHostsRecord() async throws {
        try await TestDatabase.with(poolSize: 2) { database in
            try await schema.apply(to: database)
            try await enqueue(1, host: "a.example", in: database)
            let now = Date()
            let queue = DeliveryQueue(database: database, clock: { now.addingTimeInterval(1) })
            let claimed = try #require(try await queue.claim(limit: 10).first)
            #expect(claimed.attempts == 1)
            try await queue.putBack(claimed, dueAt: now.addingTimeInterval(10))
            #expect(try await queue.claim(limit: 10).isEmpty)
            let later = DeliveryQueue(database: database, clock: { now.addingTimeInterval(11) })
            #expect(try await later.claim(limit: 10).map(\.attempts) == [1])
            #expect(try await database.query("SELECT host FROM inbox_hosts").isEmpty)

            // Superseded meanwhile, it goes (it lingered, holding back the Delete behind it).
            try await database.execute("DELETE FROM deliveries")
            try await enqueue(["create-1"], to: [inboxes[0]], in: database)
            let create = try #require(try await later.claim(limit: 10).first)
            try await enqueue(["delete-2"], to: [inboxes[0]], in: database)
            try await later.putBack(create, dueAt: now.addingTimeInterval(20))
            #expect(try await queued(in: database) == ["delete-2"])
        }
    }

    /// A host that answers is up, whatever it answers: ten 404s in a row (an actor whose inbox
    /// is gone, or made to fail) do not pause the deliveries to its other inboxes.
    @Test func aHostAnswering4xxIsNotPaused() async throws {
        try await TestDatabase.with(poolSize: 2) { database in
            try await schema.apply(to: database)
            try await enqueue(11, host: "up.example", in: database)
            let queue = DeliveryQueue(database: database, clock: { Date() })
            let now = Date()
            let claimed = try await queue.claim(limit: 10)
            for delivery in claimed {
                try await queue.failed(delivery, status: 404, error: "answered 404", retryAt: nil, pauseAfter: 10, pauseUntil: now.addingTimeInterval(600))
            }
            #expect(claimed.count == 10)
            #expect(try await queue.claim(limit: 100).count == 1)
        }
    }
}
