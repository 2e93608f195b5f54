import Foundation
import PostlyModels
import PostlyService

/// Every URL the service makes, from `PUBLIC_BASE_URL`: actor, collection, object and activity
/// ids, and the reverse, a local actor's user id from its id.
struct FederationURLs: Sendable {
    /// Where people read a post; its base URL is the base of every other URL.
    let permalink: Permalink
    /// `host[:port]` of the base URL: the host part of `acct:` handles.
    let host: String

    init(permalink: Permalink) {
        self.permalink = permalink
        host = URLParts(permalink.baseURL)?.authority ?? permalink.baseURL
    }

    /// Without a trailing slash.
    var base: String { permalink.baseURL }

    static let publicAudience = "https://www.w3.org/ns/activitystreams#Public"

    var instanceActor: String { "\(base)/ap/actor" }
    var sharedInbox: String { "\(base)/ap/inbox" }

    func actor(_ userId: String) -> String { "\(base)/ap/users/\(userId)" }
    func inbox(_ userId: String) -> String { actor(userId) + "/inbox" }
    func outbox(_ userId: String) -> String { actor(userId) + "/outbox" }
    func followers(_ userId: String) -> String { actor(userId) + "/followers" }
    func following(_ userId: String) -> String { actor(userId) + "/following" }
    /// The key of an actor (a user id, or the instance actor's `InstanceActor.id`).
    func key(of actorId: String) -> String { (actorId == InstanceActor.id ? instanceActor : actor(actorId)) + "#main-key" }
    /// The object of a post's publication: its first is the post's own id, each later one (a
    /// republish) an id of its own, `publication` (the sequence of its Create's event), since
    /// servers keep a deleted object's tombstone and refuse another Create of its id.
    func article(_ postId: String, publication: Int64? = nil) -> String {
        "\(base)/ap/posts/\(postId)" + (publication.map { "/\($0)" } ?? "")
    }
    /// Where people see an author: their posts through the gateway.
    func profilePage(_ userId: String) -> String { "\(base)/api/users/\(userId)/posts" }

    /// The user id of a local actor's id, nil for anything else.
    func userId(ofActor id: String) -> String? {
        let prefix = "\(base)/ap/users/"
        guard id.hasPrefix(prefix) else { return nil }
        let userId = id.dropFirst(prefix.count)
        return userId.isEmpty || userId.contains("/") || userId.contains("#") ? nil : String(userId)
    }
}

/// The instance actor (`/ap/actor`, an `Application`): it signs our key fetches, for servers
/// that answer only signed GETs. Its key is stored under this id, which no user id can be.
enum InstanceActor {
    static let id = ""
}
