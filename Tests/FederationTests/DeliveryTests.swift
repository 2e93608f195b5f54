import Foundation
import HTTPTypes
import PostlyModels
import Testing
import TestSupport

@testable import FederationService

/// Outbound: a published post reaches each follower's (shared) inbox once as `Create`, an
/// edit as `Update`, a delete as `Delete`, a draft never; failures are retried on the
/// schedule, a 410 is not and drops its followers.
@Suite(.serialized) struct DeliveryTests {
    let ada = Author(userId: "ada-\(UUID().uuidString.prefix(8).lowercased())", name: "Ada Lovelace")

    /// Ada, followed by the peer (whose Accept is then out of the way).
    func followed(_ service: FederationTestService, by peer: RemotePeer) async throws {
        try await service.apply(userEvent(UserSnapshot(userId: ada.userId, name: ada.name, profilePicture: nil), sequence: 1))
        let answer = try await service.post(peer.follow(service.urls.actor(ada.userId)), to: "/ap/inbox", signedBy: peer)
        #expect(answer.status == .accepted)
        _ = try await eventually(seconds: 5) { peer.activities("Accept").first }
    }

    @Test func aPostTravelsAsCreateUpdateDeleteOncePerSharedInbox() async throws {
        try await FederationTestService.run { service in
            try await RemotePeer.with { peer in
                try await followed(service, by: peer)
                // Two more followers on the peer's instance share its inbox.
                try await service.harness.database.execute(
                    """
                    INSERT INTO followers (actor_id, follower_id, inbox, shared_inbox, follow_id)
                    SELECT \(ada.userId), \(peer.base) || '/users/' || n, \(peer.base) || '/users/' || n || '/inbox', \(peer.sharedInbox), 'f' || n
                    FROM generate_series(1, 2) AS n
                    """)
                let post = UUID().uuidString.lowercased()
                try await service.apply(postEvent(.created, id: post, title: "Hello, fediverse", author: ada, sequence: 1))
                let created = try await eventually(seconds: 5) { peer.activities("Create").first }
                let create = try #require(created)
                #expect(create.path == "/shared-inbox")
                #expect(create.activity?["object"]?["type"] == "Article")
                #expect(create.activity?["object"]?["name"] == "Hello, fediverse")
                #expect(create.activity?["actor"]?.string == service.urls.actor(ada.userId))
                let request = SignedRequest(method: "POST", target: "/shared-inbox", headers: create.headers)
                let signature = try HTTPSignature(header: try #require(request.header("signature")))
                #expect(signature.headers == ["(request-target)", "host", "date", "digest"])
                let signingString = try signature.checkedSigningString(of: request, body: create.body, now: Date(), window: -60...60)
                #expect(signature.isValid(signingString: signingString, key: try await service.publicKey(of: ada.userId)))

                try await service.apply(postEvent(.updated, id: post, title: "Hello again", author: ada, sequence: 2))
                let updated = try await eventually(seconds: 5) { peer.activities("Update").first }
                #expect(updated?.activity?["object"]?["name"] == "Hello again")
                try await service.apply(postEvent(.deleted, id: post, author: ada, sequence: 3))
                let deleted = try await eventually(seconds: 5) { peer.activities("Delete").first }
                #expect(deleted?.activity?["object"]?["type"] == "Tombstone")
                #expect(deleted?.activity?["object"]?["id"]?.string == service.urls.article(post))

                // A draft never leaves; a moment later nothing more has arrived.
                let draft = UUID().uuidString.lowercased()
                try await service.apply(postEvent(.created, id: draft, status: .draft, author: ada, sequence: 1))
                try await Task.sleep(for: .milliseconds(300))
                #expect(peer.activities("Create").count == 1 && peer.activities("Update").count == 1 && peer.activities("Delete").count == 1)
                #expect(try await service.count("SELECT count(*) FROM deliveries") == 0)
                // Published later, it leaves as a Create.
                try await service.apply(postEvent(.updated, id: draft, author: ada, sequence: 2))
                let published = try await eventually(seconds: 5) { peer.activities("Create").count == 2 ? peer.activities("Create").last : nil }
                #expect(published?.activity?["object"]?["id"]?.string == service.urls.article(draft))
            }
        }
    }

    /// `postly-posts republish` sends every post again as `post.updated`: a post the
    /// fediverse already has as it is gets no Update (every follower got one of every post).
    @Test func anEventThatChangesNothingShownSendsNoUpdate() async throws {
        try await FederationTestService.run { service in
            try await service.apply(userEvent(UserSnapshot(userId: ada.userId, name: ada.name, profilePicture: nil), sequence: 1))
            try await RemotePeer.with { peer in
                try await service.harness.database.execute(
                    "INSERT INTO followers (actor_id, follower_id, inbox, follow_id) VALUES (\(ada.userId), \(peer.actorId), \(peer.inbox), 'f1')")
                let post = UUID().uuidString.lowercased()
                let created = postEvent(.created, id: post, title: "Once", author: ada, sequence: 1)
                try await service.apply(created)
                #expect(try await eventually(seconds: 5) { peer.activities("Create").first } != nil)
                var republished = created
                republished.sequence = 2
                if case .postCreated(let snapshot) = created.data { republished.data = .postUpdated(snapshot) }
                try await service.apply(republished)
                try await service.apply(postEvent(.updated, id: post, title: "Twice", author: ada, sequence: 3))
                let updates = try await eventually(seconds: 5) { peer.activities("Update").first.map { _ in peer.activities("Update") } }
                #expect(updates?.map { $0.activity?["object"]?["name"] } == ["Twice"])
            }
        }
    }

    /// A post published again is a new object, whose Create servers accept: they keep the
    /// tombstone of the last one's Delete and refuse another Create of its id (it was the same).
    @Test func anUnpublishedPostIsDeletedAndARepublishedOneCreatedAgainAsANewObject() async throws {
        try await FederationTestService.run { service in
            try await RemotePeer.with { peer in
                try await followed(service, by: peer)
                let post = UUID().uuidString.lowercased()
                func objects(_ type: String) -> [String] { peer.activities(type).compactMap { $0.activity?["object"]?["id"]?.string } }
                try await service.apply(postEvent(.created, id: post, author: ada, sequence: 1))
                // Delivered first: a Create still pending when its Delete is queued is dropped.
                _ = try await eventually(seconds: 5) { peer.activities("Create").first }
                try await service.apply(postEvent(.updated, id: post, status: .draft, author: ada, sequence: 2))
                #expect(try await eventually(seconds: 5) { peer.activities("Delete").first } != nil)
                #expect(try await service.get("/ap/posts/\(post)").status == .notFound)
                #expect(objects("Create") == [service.urls.article(post)] && objects("Delete") == [service.urls.article(post)])

                try await service.apply(postEvent(.updated, id: post, title: "Again", author: ada, sequence: 3))
                let second = service.urls.article(post, publication: 3)
                #expect(try await eventually { objects("Create").count == 2 })
                #expect(objects("Create") == [service.urls.article(post), second])
                // The new object answers; the first is gone; numbers that were never one are not there.
                let article = try await service.get("/ap/posts/\(post)/3")
                #expect(article.status == .ok && JSONValue.parse(Array(article.body))?["id"]?.string == second)
                #expect(JSONValue.parse(Array(article.body))?["name"]?.string == "Again")
                let first = try await service.get("/ap/posts/\(post)")
                #expect(first.status == .gone && JSONValue.parse(Array(first.body))?["id"]?.string == service.urls.article(post))
                for never in ["4", "03", "0", "-1", "x"] { #expect(try await service.get("/ap/posts/\(post)/\(never)").status == .notFound, "\(never)") }
                let outbox = JSONValue.parse(Array(try await service.get("/ap/users/\(ada.userId)/outbox?page=1").body))
                guard case .array(let items)? = outbox?["orderedItems"] else { Issue.record("no items"); return }
                #expect(items.map { $0["object"]?["id"]?.string } == [second])

                // Its edits and its deletion name it.
                try await service.apply(postEvent(.updated, id: post, title: "Edited", author: ada, sequence: 4))
                #expect(try await eventually { objects("Update") == [second] })
                try await service.apply(postEvent(.deleted, id: post, author: ada, sequence: 5))
                #expect(try await eventually { objects("Delete") == [service.urls.article(post), second] })
                #expect(try await service.get("/ap/posts/\(post)/3").status == .gone)
            }
        }
    }

    /// A deleted post's Create still waiting for an inbox that is down is not sent once the
    /// inbox is back: the follower would have the post after its Delete, for good.
    @Test func aPendingCreateIsNotSentAfterItsPostWasDeleted() async throws {
        try await FederationTestService.run { service in
            try await RemotePeer.with { peer in
                try await followed(service, by: peer)
                peer.answer.withLock { $0 = (.serviceUnavailable, [.retryAfter: "1"]) }
                let post = UUID().uuidString.lowercased()
                try await service.apply(postEvent(.created, id: post, author: ada, sequence: 1))
                _ = try await eventually(seconds: 5) { peer.activities("Create").first }
                try await service.apply(postEvent(.deleted, id: post, author: ada, sequence: 2))
                // Dropped by the Delete, or by its failure if it was still being sent.
                #expect(try await eventually { try await service.count("SELECT count(*) FROM deliveries WHERE body LIKE '%\"Create\"%'") == 0 })

                peer.answer.withLock { $0 = (.accepted, [:]) }
                let deleted = try await eventually(seconds: 5) { peer.activities("Delete").first }
                #expect(deleted?.activity?["object"]?["id"]?.string == service.urls.article(post))
                // Past the Create's retry: it never came again.
                try await Task.sleep(for: .milliseconds(1_500))
                #expect(peer.activities("Create").count == 1)
                #expect(try await service.count("SELECT count(*) FROM deliveries") == 0)
            }
        }
    }

    /// A scheduled post leaves at its publish time, once, and not a moment before: its
    /// creation and its edits while scheduled send nothing.
    @Test func aScheduledPostFederatesOnlyWhenItIsPublished() async throws {
        try await FederationTestService.run { service in
            try await RemotePeer.with { peer in
                try await followed(service, by: peer)
                let post = UUID().uuidString.lowercased()
                try await service.apply(postEvent(.created, id: post, status: .scheduled, author: ada, sequence: 1))
                try await service.apply(postEvent(.updated, id: post, title: "Retitled", status: .scheduled, author: ada, sequence: 2))
                try await Task.sleep(for: .milliseconds(500))
                #expect(peer.activities("Create").isEmpty && peer.activities("Update").isEmpty)
                #expect(try await service.get("/ap/posts/\(post)").status == .notFound)

                try await service.apply(postEvent(.updated, id: post, title: "Retitled", author: ada, sequence: 3))
                let create = try await eventually(seconds: 5) { peer.activities("Create").first }
                #expect(create?.activity?["object"]?["name"] == "Retitled")
                try await Task.sleep(for: .milliseconds(300))
                #expect(peer.activities("Create").count == 1 && peer.activities("Update").isEmpty)
            }
        }
    }

    /// Deliveries go out as slots free up, not in batches: an inbox slow to answer holds its own
    /// slot, and the next post reaches the other inboxes meanwhile (it waited for the slowest
    /// inbox of the batch before).
    @Test func aSlowInboxDoesNotHoldBackTheOthers() async throws {
        try await FederationTestService.run(deliveryConcurrency: 2) { service in
            try await RemotePeer.with { slow in
                try await RemotePeer.with { fast in
                    try await followed(service, by: slow)
                    try await followed(service, by: fast)
                    slow.nextAnswerDelay.withLock { $0 = .seconds(5) }
                    try await service.apply(postEvent(.created, id: UUID().uuidString, author: ada, sequence: 1))
                    _ = try await eventually(seconds: 5) { slow.activities("Create").first }
                    let started = ContinuousClock.now
                    try await service.apply(postEvent(.created, id: UUID().uuidString, author: ada, sequence: 1))
                    let reached = try await eventually(seconds: 10) { fast.activities("Create").count == 2 ? true : nil }
                    #expect(reached == true)
                    #expect(ContinuousClock.now - started < .seconds(3))
                }
            }
        }
    }

    @Test func aFailingInboxIsRetriedHonouringRetryAfter() async throws {
        try await FederationTestService.run { service in
            try await RemotePeer.with { peer in
                try await followed(service, by: peer)
                peer.answer.withLock { $0 = (.serviceUnavailable, [.retryAfter: "1"]) }
                let started = Date()
                try await service.apply(postEvent(.created, id: UUID().uuidString, author: ada, sequence: 1))
                _ = try await eventually(seconds: 5) { peer.activities("Create").count >= 2 ? true : nil }
                let attempts = peer.activities("Create")
                #expect(attempts.count >= 2)
                // The second attempt waited for Retry-After (1 s), not the schedule's 100 ms.
                #expect(Date().timeIntervalSince(started) >= 1)
                #expect(Set(attempts.compactMap { $0.activity?["id"]?.string }).count == 1)  // the same activity id
                peer.answer.withLock { $0 = (.accepted, [:]) }
                #expect(try await eventually(seconds: 5) { try await service.count("SELECT count(*) FROM deliveries") == 0 ? true : nil } == true)
            }
        }
    }

    /// An inbox that took the activity is not blamed for our database: when the delivery
    /// cannot be recorded as done, it waits out its lease, and its host's run of failures does
    /// not grow (it went on to a pause before, and the activity was sent again at once).
    @Test func aDatabaseErrorAfterADeliveryIsNotHeldAgainstTheHost() async throws {
        try await FederationTestService.run { service in
            try await RemotePeer.with { peer in
                try await followed(service, by: peer)
                #expect(try await eventually(seconds: 5) { try await service.count("SELECT count(*) FROM deliveries") == 0 ? true : nil } == true)
                // A database that cannot write now (SQLSTATE 53100, disk full) fails every removal.
                try await service.harness.database.execute(
                    """
                    CREATE FUNCTION refuse_removal() RETURNS trigger LANGUAGE plpgsql
                    AS $$ BEGIN RAISE EXCEPTION 'could not extend file' USING ERRCODE = '53100'; END $$
                    """)
                try await service.harness.database.execute(
                    "CREATE TRIGGER refuse_removal BEFORE DELETE ON deliveries FOR EACH ROW EXECUTE FUNCTION refuse_removal()")
                try await service.apply(postEvent(.created, id: UUID().uuidString, author: ada, sequence: 1))
                _ = try await eventually(seconds: 5) { peer.activities("Create").first }
                try await Task.sleep(for: .milliseconds(500))
                #expect(peer.activities("Create").count == 1)
                #expect(try await service.count("SELECT count(*) FROM inbox_hosts WHERE consecutive_failures > 0") == 0)
                #expect(try await service.count("SELECT count(*) FROM deliveries WHERE NOT dead AND last_error IS NULL") == 1)
            }
        }
    }

    /// A follower's host that does not resolve now (its resolver down, its record lapsed) is
    /// retried on the schedule, not given up at once.
    @Test func anInboxWhoseNameDoesNotResolveIsRetried() async throws {
        try await FederationTestService.run(allowPrivateNetworks: false) { service in
            try await service.apply(userEvent(UserSnapshot(userId: ada.userId, name: ada.name, profilePicture: nil), sequence: 1))
            try await service.harness.database.execute(
                """
                INSERT INTO followers (actor_id, follower_id, inbox, shared_inbox, follow_id)
                VALUES (\(ada.userId), 'https://peer.invalid/users/bo', 'https://peer.invalid/users/bo/inbox', NULL, 'f1')
                """)
            try await service.apply(postEvent(.created, id: UUID().uuidString, author: ada, sequence: 1))
            let failed = try await eventually(seconds: 5) {
                try await service.count("SELECT count(*) FROM deliveries WHERE attempts >= 1 AND last_error LIKE '%does not resolve%'") == 1 ? true : nil
            }
            #expect(failed == true)
            #expect(try await service.count("SELECT count(*) FROM deliveries WHERE dead") == 0)
        }
    }

    /// Also when it answers with a long error page: the page lost the status, and the delivery
    /// was retried for days and its followers kept.
    @Test(arguments: [0, 200_000])
    func aGoneInboxIsNotRetriedAndItsFollowersAreDropped(pageBytes: Int) async throws {
        try await FederationTestService.run { service in
            try await RemotePeer.with { peer in
                try await followed(service, by: peer)
                peer.answer.withLock { $0 = (.gone, [:]) }
                peer.answerBodyBytes.withLock { $0 = pageBytes }
                try await service.apply(postEvent(.created, id: UUID().uuidString, author: ada, sequence: 1))
                _ = try await eventually(seconds: 5) { peer.activities("Create").first }
                try await Task.sleep(for: .milliseconds(500))
                #expect(peer.activities("Create").count == 1)
                #expect(try await service.count("SELECT count(*) FROM deliveries WHERE dead AND last_status = 410") == 1)
                #expect(try await service.count("SELECT count(*) FROM followers") == 0)
            }
        }
    }

    @Test func aProfileChangeIsSentAsUpdatePerson() async throws {
        try await FederationTestService.run { service in
            try await RemotePeer.with { peer in
                try await followed(service, by: peer)
                try await service.apply(userEvent(UserSnapshot(userId: ada.userId, name: "Ada King", profilePicture: nil), sequence: 2))
                let update = try await eventually(seconds: 5) { peer.activities("Update").first }
                #expect(update?.activity?["object"]?["type"] == "Person")
                #expect(update?.activity?["object"]?["name"] == "Ada King")
            }
        }
    }
}
