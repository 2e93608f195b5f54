import PostlyEvents
import PostlyPostgres

/// What an inbox does with a verified activity, in one transaction with the record of its id
/// (an id its actor sent before changes nothing, but an `Undo`'s): a `Follow` of a local actor
/// adds the follower and sends a signed `Accept`; an `Undo` of a follow ends it; a `Delete` of
/// the remote actor itself forgets it everywhere; anything else is acknowledged and ignored.
struct InboxProcessor: Sendable {
    let writes: WriteUnit
    let documents: ActivityDocuments
    let actors: ActorRepository

    /// Applies `activity`, signed by `signer` (its `actor`). Throws `FederationError`.
    func receive(_ activity: JSONValue, from signer: RemoteActor) async throws {
        guard let id = activity["id"]?.string, let type = activity["type"]?.string else { throw FederationError.invalidActivity }
        let urls = documents.urls
        // The local actor a Follow is of, checked before anything is written (404 otherwise).
        var followed: String?
        if type == "Follow" {
            guard let object = activity["object"]?.id, let userId = urls.userId(ofActor: object),
                try await actors.actor(userId: userId) != nil
            else { throw FederationError.unknownLocalActor }
            followed = userId
        }
        try await writes.write { transaction in
            let connection = transaction.connection
            // One actor's activities one at a time: a Follow and an Undo of it each read what the
            // other ended, which a statement running alongside would not see.
            try await connection.execute("SELECT pg_advisory_xact_lock(hashtextextended(\("inbox:" + signer.id), 0))")
            // An Undo is applied again when its id repeats: Misskey gives every unfollow of the
            // same pair one id (an Undo of a follow that ended already changes nothing).
            guard try await Self.firstSight(of: id, from: signer.id, in: connection) || type == "Undo" else { return }
            switch type {
            case "Follow":
                guard let userId = followed else { return }
                try await FollowerRepository.add(signer, of: userId, followId: id, in: connection)
                try await DeliveryQueue.to(signer.inbox, documents.accept(follow: id, from: signer.id, by: userId), signer: userId, in: connection)
            case "Undo" where activity["object"]?["type"]?.string == "Follow" || activity["object"]?.string != nil:
                let follow = activity["object"]
                let userId = follow?["object"]?.id.flatMap(urls.userId(ofActor:))
                // The Follow counts as seen: arriving after its Undo it is a repeat, and one arriving
                // at once waits on the index for this transaction, which then deletes what it added.
                if let followId = follow?.id, followId.utf8.count <= RemoteActors.longestURL {
                    _ = try await Self.firstSight(of: followId, from: signer.id, in: connection)
                }
                try await FollowerRepository.remove(signer.id, of: userId, followId: follow?.id, in: connection)
            case "Delete" where activity["object"]?.id == signer.id:
                try await FollowerRepository.forget(signer.id, in: connection)
            default:
                return
            }
        }
    }

    /// Records `activityId` as seen from `actorId`; false when it was already. Per actor: by id
    /// alone, an actor could take the id of a neighbour's activity first, and have it ignored.
    static func firstSight(of activityId: String, from actorId: String, in connection: DatabaseConnection) async throws -> Bool {
        try await connection.execute(
            """
            INSERT INTO inbound_activities (actor_id, activity_id) VALUES (\(actorId), \(activityId))
            ON CONFLICT ((md5(actor_id)), activity_id) DO NOTHING
            """) > 0
    }
}
