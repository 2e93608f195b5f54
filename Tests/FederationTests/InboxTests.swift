import Foundation
import HTTPTypes
import PostlyModels
import Testing
import TestSupport

@testable import FederationService

/// The inbox, against a remote instance on loopback that signs what it sends: a Follow is
/// accepted with a signed Accept, an Undo ends it, a Delete of the remote actor forgets it,
/// and anything not signed by the activity's actor is refused with 401 naming the reason.
@Suite(.serialized) struct InboxTests {
    let ada = Author(userId: "ada-\(UUID().uuidString.prefix(8).lowercased())", name: "Ada Lovelace")

    func followers(_ service: FederationTestService) async throws -> Int {
        try await service.count("SELECT count(*) FROM followers WHERE actor_id = \(ada.userId)")
    }

    @Test func aFollowIsAcceptedWithASignedAccept() async throws {
        try await FederationTestService.run { service in
            try await service.apply(userEvent(UserSnapshot(userId: ada.userId, name: ada.name, profilePicture: nil), sequence: 1))
            try await RemotePeer.with { peer in
                let follow = peer.follow(service.urls.actor(ada.userId))
                let answer = try await service.post(follow, to: "/ap/users/\(ada.userId)/inbox", signedBy: peer)
                #expect(answer.status == .accepted, "\(answer.text)")
                #expect(try await followers(service) == 1)

                let accepted = try await eventually(seconds: 5) { peer.activities("Accept").first }
                let accept = try #require(accepted)
                #expect(accept.path == "/inbox")
                #expect(accept.activity?["actor"]?.string == service.urls.actor(ada.userId))
                #expect(accept.activity?["object"] == ["id": follow["id"]!, "type": "Follow", "actor": .string(peer.actorId), "object": follow["object"]!])
                // Signed by Ada's key, over what arrived.
                let request = SignedRequest(method: "POST", target: "/inbox", headers: accept.headers)
                let signature = try HTTPSignature(header: try #require(request.header("signature")))
                #expect(signature.keyId == service.urls.actor(ada.userId) + "#main-key")
                let signingString = try signature.checkedSigningString(of: request, body: accept.body, now: Date(), window: -60...60)
                #expect(signature.isValid(signingString: signingString, key: try await service.publicKey(of: ada.userId)))

                // The same Follow again changes nothing; a new Follow of the same actor is the same follower.
                #expect(try await service.post(follow, to: "/ap/users/\(ada.userId)/inbox", signedBy: peer).status == .accepted)
                let renewed = peer.follow(service.urls.actor(ada.userId))
                #expect(try await service.post(renewed, to: "/ap/inbox", signedBy: peer).status == .accepted)
                #expect(try await followers(service) == 1)
                let counted = JSONValue.parse(Array(try await service.get("/ap/users/\(ada.userId)/followers").body))
                #expect(counted?["totalItems"] == 1)

                // Undo of the follow ends it.
                let undo: JSONValue = ["id": .string("\(peer.base)/undo/1"), "type": "Undo", "actor": .string(peer.actorId), "object": renewed]
                #expect(try await service.post(undo, to: "/ap/inbox", signedBy: peer).status == .accepted)
                #expect(try await followers(service) == 0)
            }
        }
    }

    /// A Follow that arrives after its Undo (deliveries race, and retries reorder them) is a
    /// repeat: it made a follower that nothing would ever remove.
    @Test func aFollowArrivingAfterItsUndoLeavesNoFollower() async throws {
        try await FederationTestService.run { service in
            try await service.apply(userEvent(UserSnapshot(userId: ada.userId, name: ada.name, profilePicture: nil), sequence: 1))
            try await RemotePeer.with { peer in
                let follow = peer.follow(service.urls.actor(ada.userId))
                let undo: JSONValue = ["id": .string("\(peer.base)/undo/1"), "type": "Undo", "actor": .string(peer.actorId), "object": follow]
                let undone = try await service.post(undo, to: "/ap/inbox", signedBy: peer)
                let followed = try await service.post(follow, to: "/ap/inbox", signedBy: peer)
                #expect(undone.status == .accepted && followed.status == .accepted)
                #expect(try await followers(service) == 0)
                // An Undo naming its Follow by id alone does the same.
                let second = peer.follow(service.urls.actor(ada.userId), id: "second")
                let undoById: JSONValue = [
                    "id": .string("\(peer.base)/undo/2"), "type": "Undo", "actor": .string(peer.actorId), "object": .string("\(peer.base)/follows/second"),
                ]
                let undoneById = try await service.post(undoById, to: "/ap/inbox", signedBy: peer)
                let followedAgain = try await service.post(second, to: "/ap/inbox", signedBy: peer)
                #expect(undoneById.status == .accepted && followedAgain.status == .accepted)
                #expect(try await followers(service) == 0)
            }
        }
    }

    /// Misskey gives every unfollow of the same pair one Undo id (its Follow's made-up id and
    /// "/undo"): the second unfollow, after a new Follow, ends that follow too. It was taken
    /// for a repeat, and the follower was kept for good.
    @Test func aSecondUnfollowUnderTheFirstOnesIdEndsTheNewFollow() async throws {
        try await FederationTestService.run { service in
            try await service.apply(userEvent(UserSnapshot(userId: ada.userId, name: ada.name, profilePicture: nil), sequence: 1))
            try await RemotePeer.with { (peer: RemotePeer) async throws in
                let actor = service.urls.actor(ada.userId)
                let madeUpFollow: JSONValue = [
                    "id": .string("\(peer.base)/follows/pair"), "type": "Follow", "actor": .string(peer.actorId), "object": .string(actor),
                ]
                let undo: JSONValue = [
                    "id": .string("\(peer.base)/follows/pair/undo"), "type": "Undo", "actor": .string(peer.actorId), "object": madeUpFollow,
                ]
                for round in 1...2 {
                    #expect(try await service.post(peer.follow(actor), to: "/ap/inbox", signedBy: peer).status == .accepted)
                    #expect(try await followers(service) == 1)
                    #expect(try await service.post(undo, to: "/ap/inbox", signedBy: peer).status == .accepted)
                    #expect(try await followers(service) == 0, "after unfollow \(round)")
                }
            }
        }
    }

    /// An Undo of an earlier Follow arriving after the actor followed anew (a retry, the first
    /// answer lost or a 503; or deliveries reordered) leaves the new follow. It ended any follow
    /// of the same actor, and the remote user got none of the posts they followed again for.
    @Test func anUnfollowOfAnEarlierFollowLeavesTheNewOne() async throws {
        try await FederationTestService.run { service in
            try await service.apply(userEvent(UserSnapshot(userId: ada.userId, name: ada.name, profilePicture: nil), sequence: 1))
            try await RemotePeer.with { (peer: RemotePeer) async throws in
                let actor = service.urls.actor(ada.userId)
                let first = peer.follow(actor)
                let undo: JSONValue = ["id": .string("\(peer.base)/undo/first"), "type": "Undo", "actor": .string(peer.actorId), "object": first]
                #expect(try await service.post(first, to: "/ap/inbox", signedBy: peer).status == .accepted)
                #expect(try await service.post(undo, to: "/ap/inbox", signedBy: peer).status == .accepted)
                #expect(try await followers(service) == 0)
                let second = peer.follow(actor)
                #expect(try await service.post(second, to: "/ap/inbox", signedBy: peer).status == .accepted)
                #expect(try await service.post(undo, to: "/ap/inbox", signedBy: peer).status == .accepted)
                #expect(try await followers(service) == 1, "a retried Undo")
                // The Undo of the second arrives after a third Follow replaced it.
                #expect(try await service.post(peer.follow(actor), to: "/ap/inbox", signedBy: peer).status == .accepted)
                let undoSecond: JSONValue = ["id": .string("\(peer.base)/undo/second"), "type": "Undo", "actor": .string(peer.actorId), "object": second]
                #expect(try await service.post(undoSecond, to: "/ap/inbox", signedBy: peer).status == .accepted)
                #expect(try await followers(service) == 1, "a late Undo")
            }
        }
    }

    @Test func aDeletedRemoteActorIsForgotten() async throws {
        try await FederationTestService.run { service in
            try await service.apply(userEvent(UserSnapshot(userId: ada.userId, name: ada.name, profilePicture: nil), sequence: 1))
            try await RemotePeer.with { peer in
                _ = try await service.post(peer.follow(service.urls.actor(ada.userId)), to: "/ap/inbox", signedBy: peer)
                #expect(try await followers(service) == 1)
                let delete: JSONValue = ["id": .string("\(peer.base)/delete/1"), "type": "Delete", "actor": .string(peer.actorId), "object": .string(peer.actorId)]
                #expect(try await service.post(delete, to: "/ap/inbox", signedBy: peer).status == .accepted)
                #expect(try await followers(service) == 0)
                #expect(try await service.count("SELECT count(*) FROM remote_actors") == 0)
            }
        }
    }

    /// A key once stored for one actor id, fetched again under another (the peer renamed the
    /// actor; its key's id stayed): the key now belongs to the new id, and the request is
    /// answered, not a 500 from the key's unique index (which the peer would retry for days).
    @Test func aKeyFetchedAgainUnderAnotherActorIdMovesToIt() async throws {
        try await FederationTestService.run { service in
            try await service.apply(userEvent(UserSnapshot(userId: ada.userId, name: ada.name, profilePicture: nil), sequence: 1))
            try await RemotePeer.with { peer in
                #expect(try await service.post(peer.follow(service.urls.actor(ada.userId)), to: "/ap/inbox", signedBy: peer).status == .accepted)
                let renamed = peer.base + "/users/bob"
                peer.renamedActorId.withLock { $0 = renamed }
                try await service.harness.database.execute("UPDATE remote_actors SET fetched_at = now() - interval '30 days'")

                let follow: JSONValue = [
                    "@context": "https://www.w3.org/ns/activitystreams", "id": .string("\(peer.base)/follows/renamed"), "type": "Follow",
                    "actor": .string(renamed), "object": .string(service.urls.actor(ada.userId)),
                ]
                let answer = try await service.post(follow, to: "/ap/inbox", signedBy: peer)
                #expect(answer.status == .accepted, "\(answer.text)")
                #expect(try await service.count("SELECT count(*) FROM remote_actors WHERE key_id = \(peer.keyId) AND id = \(renamed)") == 1)
                #expect(try await service.count("SELECT count(*) FROM remote_actors") == 1)
            }
        }
    }

    @Test func unsignedAlteredStaleAndMisattributedRequestsAre401WithTheReason() async throws {
        try await FederationTestService.run { service in
            try await service.apply(userEvent(UserSnapshot(userId: ada.userId, name: ada.name, profilePicture: nil), sequence: 1))
            try await RemotePeer.with { peer in
                let path = "/ap/users/\(ada.userId)/inbox"
                let follow = peer.follow(service.urls.actor(ada.userId))
                func refused(_ answer: TestAnswer, _ reason: String, sourceLocation: SourceLocation = #_sourceLocation) {
                    #expect(answer.status == .unauthorized, sourceLocation: sourceLocation)
                    #expect(answer.json["code"] as? String == "signature_invalid", sourceLocation: sourceLocation)
                    #expect((answer.json["detail"] as? String)?.contains(reason) == true, "\(answer.json["detail"] ?? "")", sourceLocation: sourceLocation)
                }
                refused(try await service.post(follow, to: path, signedBy: peer) { headers, _ in headers.removeAll { $0.name == "Signature" } }, "no Signature")
                refused(try await service.post(follow, to: path, signedBy: peer) { _, body in body[body.count - 2] = UInt8(ascii: " ") }, "Digest")
                refused(try await service.post(follow, to: path, signedBy: peer, date: Date().addingTimeInterval(-13 * 3600)), "Date")
                // Signed with a key that is not the one the peer publishes, even after a refetch.
                refused(try await service.post(follow, to: path, signedBy: peer, key: try ActorKeyPair.generate()), "does not verify")
                // Signed by the peer, claiming to be someone else.
                var impostor = follow
                if case .object(var fields) = impostor {
                    fields["actor"] = "https://mastodon.example/users/carol"
                    impostor = .object(fields)
                }
                refused(try await service.post(impostor, to: path, signedBy: peer), "owner")
                #expect(try await followers(service) == 0)
            }
        }
    }

    /// Anyone may send requests naming keys on any server: this instance fetches at most 30 a
    /// minute from one server, and defers the rest with 503 and Retry-After (a sender tries
    /// those again). Every one cost a fetch, as fast as they came.
    @Test func keysAreFetchedFromOneServerAtMostThirtyTimesAMinute() async throws {
        try await FederationTestService.run { service in
            try await service.apply(userEvent(UserSnapshot(userId: ada.userId, name: ada.name, profilePicture: nil), sequence: 1))
            try await RemotePeer.with { peer in
                let follow = peer.follow(service.urls.actor(ada.userId))
                var statuses: [HTTPResponse.Status] = []
                for n in 0..<35 {
                    statuses.append(try await service.post(follow, to: "/ap/inbox", signedBy: peer, keyId: "\(peer.base)/keys/\(n)").status)
                }
                #expect(statuses.prefix(30).allSatisfy { $0 == .unauthorized })
                #expect(statuses.suffix(5).allSatisfy { $0 == .serviceUnavailable })
                #expect(peer.missingKeyFetches.value == 30)
                let deferred = try await service.post(follow, to: "/ap/inbox", signedBy: peer, keyId: "\(peer.base)/keys/35")
                #expect(deferred.headers[.retryAfter] == "60")
                #expect(try await followers(service) == 0)
            }
        }
    }

    /// A key whose documents each answer just inside the request timeout: the check ends at its
    /// deadline (1.5 s here) with a 401. The two fetches it chained, and their refetch once the
    /// signature failed, took 3.6 s; at the defaults, such chains held a request 2 minutes.
    @Test func aSignatureCheckEndsAtItsDeadlineHoweverManyFetchesItsKeyChains() async throws {
        try await FederationTestService.run(configure: {
            $0.requestTimeout = .seconds(1)
            $0.keyFetchTime = .milliseconds(1500)
        }) { service in
            try await service.apply(userEvent(UserSnapshot(userId: ada.userId, name: ada.name, profilePicture: nil), sequence: 1))
            try await RemotePeer.with { peer in
                // The actor's document names another id, fetched in turn; the wrong key makes
                // the check fetch both again.
                peer.renamedActorId.withLock { $0 = peer.base + "/users/bob" }
                peer.documentDelay.withLock { $0 = .milliseconds(900) }
                let mallory = try ActorKeyPair.generate()
                let started = ContinuousClock.now
                let answer = try await service.post(peer.follow(service.urls.actor(ada.userId)), to: "/ap/inbox", signedBy: peer, key: mallory)
                let took = started.duration(to: .now)
                #expect(answer.status == .unauthorized, "\(answer.text)")
                #expect(took < .milliseconds(2500), "\(took)")
                #expect(try await followers(service) == 0)
            }
        }
    }

    /// A key id on a name that resolves to a private address here and one on a name that does
    /// not resolve get the same refusal, naming neither: the inbox tells no one which of our
    /// internal names exist.
    /// A server's budget is its own, and comes back when its minute is over.
    @Test func aKeyFetchBudgetIsPerServerAndComesBackAfterItsMinute() {
        let budget = KeyFetchBudget(perWindow: 2)
        let start = ContinuousClock.now
        #expect([budget.take(host: "a.example", now: start), budget.take(host: "a.example", now: start)] == [true, true])
        #expect(!budget.take(host: "a.example", now: start + .seconds(59)))
        #expect(budget.take(host: "b.example", now: start + .seconds(59)))
        // The sweep at the minute's end keeps the windows still running.
        #expect(budget.take(host: "a.example", now: start + .seconds(60)))
        #expect(budget.take(host: "b.example", now: start + .seconds(61)))
        #expect(!budget.take(host: "b.example", now: start + .seconds(62)))
    }

    @Test func aRefusedKeyHostSaysNothingOfOurNetwork() async throws {
        try await FederationTestService.run(allowPrivateNetworks: false) { service in
            try await service.apply(userEvent(UserSnapshot(userId: ada.userId, name: ada.name, profilePicture: nil), sequence: 1))
            try await RemotePeer.with { peer in
                let follow = peer.follow(service.urls.actor(ada.userId))
                var details: [String] = []
                for keyId in ["http://localhost/actor#main-key", "http://no-such-host.invalid/actor#main-key"] {
                    let answer = try await service.post(follow, to: "/ap/inbox", signedBy: peer, keyId: keyId)
                    #expect(answer.status == .unauthorized, "\(answer.text)")
                    let detail = try #require(answer.json["detail"] as? String)
                    #expect(!detail.contains("localhost") && !detail.contains("no-such-host") && !detail.contains("resolve"), "\(detail)")
                    details.append(detail)
                }
                #expect(details[0] == details[1])
                #expect(try await followers(service) == 0)
            }
        }
    }

    /// A key document naming an owner on another server is refused before that owner is
    /// fetched: it was fetched first, so anyone could have us send requests to any server, as
    /// often as they liked.
    @Test func aKeyThatClaimsAnActorOfAnotherServerIsRefusedWithoutAskingThatServer() async throws {
        try await FederationTestService.run { service in
            try await service.apply(userEvent(UserSnapshot(userId: ada.userId, name: ada.name, profilePicture: nil), sequence: 1))
            try await RemotePeer.with { victim in
                try await RemotePeer.with { impostor in
                    impostor.claimedOwner.withLock { $0 = victim.actorId }
                    var follow = victim.follow(service.urls.actor(ada.userId))
                    if case .object(var fields) = follow {
                        fields["id"] = .string(impostor.base + "/follows/forged")
                        follow = .object(fields)
                    }
                    let answer = try await service.post(follow, to: "/ap/inbox", signedBy: impostor, keyId: impostor.base + "/key")
                    #expect(answer.status == .unauthorized, "\(answer.text)")
                    #expect((answer.json["detail"] as? String)?.contains("another server") == true, "\(answer.text)")
                    #expect(victim.actorFetches.value == 0)
                    #expect(try await followers(service) == 0)
                }
            }
        }
    }

    @Test func aKeyThatItsOwnerDoesNotPublishIsRefused() async throws {
        try await FederationTestService.run { service in
            try await service.apply(userEvent(UserSnapshot(userId: ada.userId, name: ada.name, profilePicture: nil), sequence: 1))
            try await RemotePeer.with { peer in
                // The key document at /key names the peer's actor, which publishes another key.
                let answer = try await service.post(
                    peer.follow(service.urls.actor(ada.userId)), to: "/ap/inbox", signedBy: peer, keyId: peer.base + "/key")
                #expect(answer.status == .unauthorized, "\(answer.text)")
                #expect((answer.json["detail"] as? String)?.contains("does not publish") == true, "\(answer.text)")
                #expect(try await followers(service) == 0)
            }
        }
    }

    /// A key's document must be the one its id names: a file uploaded to the actor's server,
    /// claiming to be the actor with a key of the uploader's, made the uploader that actor.
    /// The id it names is fetched instead, and that actor does not publish the key.
    @Test func aDocumentThatIsNotTheOneItNamesSpeaksForNoOne() async throws {
        try await FederationTestService.run { service in
            try await service.apply(userEvent(UserSnapshot(userId: ada.userId, name: ada.name, profilePicture: nil), sequence: 1))
            try await RemotePeer.with { peer in
                let mallory = try ActorKeyPair.generate()
                let keyId = peer.base + "/media/avatar.json#main-key"
                peer.upload.withLock { $0 = peer.actorDocument(id: peer.actorId, keyId: keyId, publicKeyPEM: mallory.publicKeyPEM) }
                let answer = try await service.post(peer.follow(service.urls.actor(ada.userId)), to: "/ap/inbox", signedBy: peer, key: mallory, keyId: keyId)
                #expect(answer.status == .unauthorized, "\(answer.text)")
                #expect(answer.json["code"] as? String == "signature_invalid", "\(answer.text)")
                #expect(try await followers(service) == 0)
                #expect(try await service.count("SELECT count(*) FROM remote_actors") == 0)
            }
        }
    }

    /// An activity whose id is on another server is refused: taken first, it would make the
    /// real one (that server's Delete, say) a repeat, ignored.
    @Test func anActivityNamedOnAnotherServerIsRefused() async throws {
        try await FederationTestService.run { service in
            try await service.apply(userEvent(UserSnapshot(userId: ada.userId, name: ada.name, profilePicture: nil), sequence: 1))
            try await RemotePeer.with { peer in
                let follow = peer.follow(service.urls.actor(ada.userId))
                guard case .object(var fields) = follow else { return }
                fields["id"] = "https://victim.example/users/alice#delete"
                let answer = try await service.post(.object(fields), to: "/ap/inbox", signedBy: peer)
                #expect(answer.status == .unauthorized, "\(answer.text)")
                #expect((answer.json["detail"] as? String)?.contains("not on its actor's server") == true, "\(answer.text)")
                #expect(try await followers(service) == 0)
                #expect(try await service.count("SELECT count(*) FROM inbound_activities") == 0)
            }
        }
    }

    /// An activity id is another actor's own to use, even on the same server: mallory, first
    /// with the id of alice's Delete, no longer makes alice's real Delete a repeat, ignored.
    @Test func anIdTakenByAnotherActorOfTheServerDoesNotMakeTheRealActivityARepeat() async throws {
        try await FederationTestService.run { service in
            try await service.apply(userEvent(UserSnapshot(userId: ada.userId, name: ada.name, profilePicture: nil), sequence: 1))
            try await RemotePeer.with { peer in
                #expect(try await service.post(peer.follow(service.urls.actor(ada.userId)), to: "/ap/inbox", signedBy: peer).status == .accepted)
                #expect(try await followers(service) == 1)
                let mallory = peer.base + "/users/mallory"
                let deleteId = peer.actorId + "#delete"
                let like: JSONValue = ["id": .string(deleteId), "type": "Like", "actor": .string(mallory), "object": .string(service.urls.actor(ada.userId))]
                let liked = try await service.post(like, to: "/ap/inbox", signedBy: peer, keyId: mallory + "#main-key")
                #expect(liked.status == .accepted, "\(liked.text)")

                let delete: JSONValue = ["id": .string(deleteId), "type": "Delete", "actor": .string(peer.actorId), "object": .string(peer.actorId)]
                #expect(try await service.post(delete, to: "/ap/inbox", signedBy: peer).status == .accepted)
                #expect(try await followers(service) == 0)
                // The same Delete again is a repeat.
                #expect(try await service.post(delete, to: "/ap/inbox", signedBy: peer).status == .accepted)
                #expect(try await service.count("SELECT count(*) FROM inbound_activities WHERE activity_id = \(deleteId)") == 2)
            }
        }
    }

    /// An actor's inbox must be on its own server: one elsewhere would have our Accepts, and
    /// their failures (which pause a host), go where the actor chose. A shared inbox elsewhere
    /// is not used.
    @Test func anInboxOnAnotherServerIsRefusedAndASharedOneIgnored() async throws {
        try await FederationTestService.run { service in
            try await service.apply(userEvent(UserSnapshot(userId: ada.userId, name: ada.name, profilePicture: nil), sequence: 1))
            try await RemotePeer.with { victim in
                try await RemotePeer.with { peer in
                    peer.publishedInboxes.withLock { $0 = (victim.inbox, peer.sharedInbox) }
                    let refused = try await service.post(peer.follow(service.urls.actor(ada.userId)), to: "/ap/inbox", signedBy: peer)
                    #expect(refused.status == .unauthorized, "\(refused.text)")
                    #expect((refused.json["detail"] as? String)?.contains("another server") == true, "\(refused.text)")
                    #expect(try await followers(service) == 0)

                    peer.publishedInboxes.withLock { $0 = (peer.inbox, victim.sharedInbox) }
                    try await service.harness.database.execute("DELETE FROM remote_actors")
                    let accepted = try await service.post(peer.follow(service.urls.actor(ada.userId)), to: "/ap/inbox", signedBy: peer)
                    #expect(accepted.status == .accepted, "\(accepted.text)")
                    #expect(try await eventually(seconds: 5) { peer.activities("Accept").first?.path } == "/inbox")
                    #expect(try await service.count("SELECT count(*) FROM followers WHERE shared_inbox IS NULL") == 1)
                    #expect(victim.received.value.isEmpty)
                }
            }
        }
    }

    /// A shared inbox of kilobytes is not used: an index holds each delivery's inbox, and
    /// one follower's failed every delivery of the author it followed (its posts went to the
    /// dead letters, on every edit).
    @Test func aSharedInboxOfKilobytesIsNotUsedAndThePostsStillGoOut() async throws {
        try await FederationTestService.run { service in
            try await service.apply(userEvent(UserSnapshot(userId: ada.userId, name: ada.name, profilePicture: nil), sequence: 1))
            try await RemotePeer.with { peer in
                // Random: a repetition would compress under the index's limit.
                let noise = (0..<4_000).map { _ in String(UInt8.random(in: 0...255), radix: 16) }.joined()
                peer.publishedInboxes.withLock { $0 = (peer.inbox, peer.sharedInbox + "/" + noise) }
                let accepted = try await service.post(peer.follow(service.urls.actor(ada.userId)), to: "/ap/inbox", signedBy: peer)
                #expect(accepted.status == .accepted, "\(accepted.text)")
                #expect(try await service.count("SELECT count(*) FROM followers WHERE shared_inbox IS NULL") == 1)
                try await service.apply(postEvent(.created, id: UUID().uuidString.lowercased(), title: "Still out", author: ada, sequence: 1))
                let created = try await eventually(seconds: 5) { peer.activities("Create").first }
                #expect(created?.path == "/inbox")
            }
        }
    }

    /// An Accept names the Follow, without what else it carried: a Follow padded to a
    /// megabyte made an Accept of a megabyte, a stored delivery kept for days.
    @Test func anAcceptIsSmallWhateverTheFollowCarried() async throws {
        try await FederationTestService.run { service in
            try await service.apply(userEvent(UserSnapshot(userId: ada.userId, name: ada.name, profilePicture: nil), sequence: 1))
            try await RemotePeer.with { peer in
                guard case .object(var follow) = peer.follow(service.urls.actor(ada.userId)) else { return }
                follow["summary"] = .string(String(repeating: "padding ", count: 100_000))
                #expect(try await service.post(.object(follow), to: "/ap/inbox", signedBy: peer).status == .accepted)
                let accepted = try await eventually(seconds: 5) { peer.activities("Accept").first }
                #expect(try #require(accepted).body.count < 2_000)
                #expect(try await service.count("SELECT count(*) FROM deliveries WHERE length(body) > 2000") == 0)
            }
        }
    }

    /// An activity id of kilobytes is refused as a bad activity, changing nothing: its insert
    /// among the ids seen failed on the index, and the sender saw a 500 (and tried again for days).
    @Test func anActivityIdOverTwoKilobytesIsA400AndChangesNothing() async throws {
        try await FederationTestService.run { service in
            try await service.apply(userEvent(UserSnapshot(userId: ada.userId, name: ada.name, profilePicture: nil), sequence: 1))
            try await RemotePeer.with { peer in
                // Random: a repetition would compress under the index's limit.
                let noise = (0..<1_500).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
                let answer = try await service.post(peer.follow(service.urls.actor(ada.userId), id: noise), to: "/ap/inbox", signedBy: peer)
                #expect(answer.status == .badRequest, "\(answer.text)")
                #expect(answer.json["code"] as? String == "invalid_activity", "\(answer.text)")
                #expect(try await followers(service) == 0)
                #expect(try await service.count("SELECT count(*) FROM inbound_activities") == 0)
                #expect(peer.activities("Accept").isEmpty)
            }
        }
    }

    @Test func badBodiesAreRefusedAndChangeNothing() async throws {
        try await FederationTestService.run { service in
            try await service.apply(userEvent(UserSnapshot(userId: ada.userId, name: ada.name, profilePicture: nil), sequence: 1))
            try await RemotePeer.with { peer in
                let path = "/ap/users/\(ada.userId)/inbox"
                let notAnActivity: JSONValue = ["type": "Follow"]
                let answer = try await service.post(notAnActivity, to: path, signedBy: peer)
                #expect(answer.status == .badRequest && answer.json["code"] as? String == "invalid_activity")
                let unknown = try await service.post(peer.follow(service.urls.actor("nobody")), to: "/ap/users/nobody/inbox", signedBy: peer)
                #expect(unknown.status == .notFound)
                let elsewhere = try await service.post(peer.follow(service.urls.actor("nobody")), to: "/ap/inbox", signedBy: peer)
                #expect(elsewhere.status == .notFound)
                let big = try await service.post(peer.follow(service.urls.actor(ada.userId)), to: path, signedBy: peer) { _, body in
                    body = Array(repeating: UInt8(ascii: " "), count: (1 << 20) + 1)
                }
                #expect(big.status == .contentTooLarge)
                var headers = HTTPFields()
                headers[.contentType] = "text/plain"
                headers[HTTPField.Name("Signature")!] = "keyId=\"x\",signature=\"AAAA\""
                let text = try await service.harness.request(.post, path, headers: headers)
                #expect(text.status == .unsupportedMediaType)
                #expect(try await followers(service) == 0)
            }
        }
    }
}

/// Calls `probe` until it returns a value, for at most `seconds`.
func eventually<T>(seconds: Double, _ probe: () async throws -> T?) async throws -> T? {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if let value = try await probe() { return value }
        try await Task.sleep(for: .milliseconds(20))
    }
    return try await probe()
}
