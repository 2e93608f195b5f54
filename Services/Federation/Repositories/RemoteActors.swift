import Foundation
import Logging
import PostlyPostgres

/// A remote actor as its document says: its key and its inboxes.
struct RemoteActor: Sendable, Equatable {
    var id: String
    var keyId: String
    var publicKeyPEM: String
    var inbox: String
    var sharedInbox: String?
}

/// Remote actors' keys, by key id: from the table while fresh (24 h), else fetched from the
/// key's document (signed as the instance actor, for servers in authorized-fetch mode) and
/// stored. A stale entry still serves when its server cannot be reached: a deleted actor's
/// server answers 410, and its `Delete` must still verify. Fetches from one server are
/// bounded by `budget`; past it, a stored entry serves, stale or not.
struct RemoteActors: Sendable {
    let database: Database
    let http: OutboundHTTP
    let keys: ActorKeys
    let urls: FederationURLs
    let lifetime: TimeInterval
    let budget: KeyFetchBudget
    let logger: Logger

    /// The longest id or inbox taken, in bytes (what browsers and servers take of a URL).
    static let longestURL = 2_048

    /// The actor whose key `keyId` is; `refresh` fetches it even when stored and fresh (the
    /// one refetch after a signature failed: the actor may have rotated its key). Its fetches
    /// (up to four: a key, its owner, and the ids each names) end by `deadline`.
    /// Throws `SignatureError.keyUnavailable` when the key cannot be had, `keyFetchesDeferred`
    /// past the budget, `keyLookupDeferred` when its name could not be looked up now (both 503,
    /// and only when no key is stored), and the database's own errors (503) when it cannot be
    /// asked.
    func actor(keyId: String, refresh: Bool = false, by deadline: ContinuousClock.Instant) async throws -> RemoteActor {
        let stored = try await self.stored(keyId: keyId)
        if let stored, stored.fresh, !refresh { return stored.actor }
        // Out of time (a refetch after a slow first fetch): neither the host's budget nor a
        // name lookup is spent on a fetch that cannot be made.
        guard ContinuousClock.now < deadline else {
            if let stored, !refresh { return stored.actor }
            throw SignatureError.keyUnavailable("its server did not answer in time")
        }
        guard budget.take(host: URLParts(keyId)?.authority ?? keyId) else {
            if let stored { return stored.actor }
            throw SignatureError.keyFetchesDeferred
        }
        do {
            return try await fetch(keyId: keyId, by: deadline)
        } catch let error as DatabaseError {
            throw error
        } catch {
            if let stored, !refresh { return stored.actor }
            switch error {
            case let error as RemoteActorError: throw SignatureError.keyUnavailable(error.description)
            case OutboundError.resolverBusy: throw SignatureError.keyLookupDeferred
            case let error as OutboundError: throw SignatureError.keyUnavailable(error.peerDescription)
            default: throw SignatureError.keyUnavailable("its server did not answer")
            }
        }
    }

    private func stored(keyId: String) async throws -> (actor: RemoteActor, fresh: Bool)? {
        let rows = try await database.query(
            """
            SELECT id, key_id, public_key_pem, inbox, shared_inbox, fetched_at > now() - make_interval(secs => \(lifetime)) AS fresh
            FROM remote_actors WHERE key_id = \(keyId)
            """)
        guard let row = rows.first else { return nil }
        let actor = RemoteActor(
            id: try row.decode("id"), keyId: try row.decode("key_id"), publicKeyPEM: try row.decode("public_key_pem"),
            inbox: try row.decode("inbox"), sharedInbox: try row.decode("shared_inbox"))
        return (actor, try row.decode("fresh"))
    }

    /// Fetches the document of `keyId` (an actor with its `publicKey`, or a key naming its
    /// `owner`, whose actor is then fetched for its inboxes) and stores the actor. The actor
    /// must publish the key itself, and live where the key does, its inbox too: a server
    /// vouches for its own actors only (an inbox elsewhere would send our `Accept`s, and their
    /// failures, to a server of the actor's choosing). A shared inbox elsewhere is not used.
    private func fetch(keyId: String, by deadline: ContinuousClock.Instant) async throws -> RemoteActor {
        var actorDocument = try await fetchDocument(keyId, by: deadline)
        if actorDocument["inbox"] == nil, actorDocument["publicKeyPem"] != nil, let owner = actorDocument["owner"]?.string {
            // Checked before the fetch: a key naming an owner on any server had us fetch it, as
            // often as requests named the key, for servers of the sender's choosing.
            guard URLParts(owner)?.authority == URLParts(keyId)?.authority else { throw RemoteActorError.elsewhere }
            actorDocument = try await fetchDocument(owner, by: deadline)
        }
        guard let key = Self.publicKey(keyId, in: actorDocument), let pem = key["publicKeyPem"]?.string else { throw RemoteActorError.noKey }
        guard let owner = actorDocument.id, key["owner"]?.string ?? owner == owner, let inbox = actorDocument["inbox"]?.string else {
            throw RemoteActorError.incomplete
        }
        let authority = URLParts(owner)?.authority
        guard authority == URLParts(keyId)?.authority, authority == URLParts(inbox)?.authority else { throw RemoteActorError.elsewhere }
        // An index holds them (one delivery per activity and inbox): an inbox of kilobytes
        // failed every delivery of the author it follows.
        guard [owner, keyId, inbox].allSatisfy({ $0.utf8.count <= Self.longestURL }) else { throw RemoteActorError.tooLong }
        let sharedInbox = actorDocument["endpoints"]?["sharedInbox"]?.string.flatMap {
            URLParts($0)?.authority == authority && $0.utf8.count <= Self.longestURL ? $0 : nil
        }
        let actor = RemoteActor(id: owner, keyId: keyId, publicKeyPEM: pem, inbox: inbox, sharedInbox: sharedInbox)
        try await database.retryingTransaction { connection in
            // The key is the actor's that publishes it now: an actor that had it before (the
            // peer renamed it) keeps it no longer.
            try await connection.execute("DELETE FROM remote_actors WHERE key_id = \(actor.keyId) AND id <> \(actor.id)")
            try await connection.execute(
                """
                INSERT INTO remote_actors (id, key_id, public_key_pem, inbox, shared_inbox, fetched_at)
                VALUES (\(actor.id), \(actor.keyId), \(actor.publicKeyPEM), \(actor.inbox), \(actor.sharedInbox), now())
                ON CONFLICT (id) DO UPDATE SET key_id = EXCLUDED.key_id, public_key_pem = EXCLUDED.public_key_pem,
                    inbox = EXCLUDED.inbox, shared_inbox = EXCLUDED.shared_inbox, fetched_at = EXCLUDED.fetched_at
                """)
        }
        return actor
    }

    /// The document at `url`, which must be the one its `id` names (the URL without its
    /// fragment): any file a server serves (an upload, say) could otherwise claim to be one of
    /// its actors, with a key of its own. One naming another id on the same server is fetched
    /// once from there, as Mastodon does; anything else is refused.
    private func fetchDocument(_ url: String, by deadline: ContinuousClock.Instant) async throws -> JSONValue {
        let document = try await fetchedDocument(url, by: deadline)
        guard let id = document.id else { throw RemoteActorError.notItself }
        if id == Self.withoutFragment(url) { return document }
        guard URLParts(id)?.authority == URLParts(url)?.authority else { throw RemoteActorError.notItself }
        let named = try await fetchedDocument(id, by: deadline)
        guard named.id == id else { throw RemoteActorError.notItself }
        return named
    }

    private func fetchedDocument(_ url: String, by deadline: ContinuousClock.Instant) async throws -> JSONValue {
        let response = try await http.get(url, keyId: urls.key(of: InstanceActor.id), key: try await keys.keyPair(of: InstanceActor.id), by: deadline)
        guard response.status == 200 else { throw RemoteActorError.status(response.status) }
        guard let document = JSONValue.parse(response.body) else { throw RemoteActorError.notJSON }
        return document
    }

    static func withoutFragment(_ url: String) -> String {
        url.firstIndex(of: "#").map { String(url[..<$0]) } ?? url
    }

    /// The key `keyId` among an actor's `publicKey` (one key or several), by its id; a keyId
    /// that is the actor's own id names its only key.
    static func publicKey(_ keyId: String, in actor: JSONValue) -> JSONValue? {
        let keys: [JSONValue]
        switch actor["publicKey"] {
        case .object(let key)?: keys = [.object(key)]
        case .array(let all)?: keys = all
        default: return nil
        }
        if let key = keys.first(where: { $0["id"]?.string == keyId }) { return key }
        return keys.count == 1 && actor.id == keyId ? keys.first : nil
    }
}

enum RemoteActorError: Error, CustomStringConvertible {
    case status(Int)
    case notJSON
    case noKey
    case incomplete
    case elsewhere
    case tooLong
    case notItself

    var description: String {
        switch self {
        case .status(let status): "its document answered \(status)"
        case .notJSON: "its document is not JSON"
        case .noKey: "its actor does not publish it"
        case .incomplete: "its actor has no inbox, or the key's owner is another actor"
        case .elsewhere: "its actor, or the actor's inbox, is on another server"
        case .tooLong: "its actor's id or inbox is longer than \(RemoteActors.longestURL) bytes"
        case .notItself: "its document is not the one its id names"
        }
    }
}
