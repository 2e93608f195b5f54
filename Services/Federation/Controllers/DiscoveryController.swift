import Hummingbird
import PostlyService

/// How the fediverse finds our actors: WebFinger (`acct:handle@host`, also `acct:userId@host`;
/// the instance actor as `acct:host@host`) and NodeInfo.
struct DiscoveryController: Sendable {
    let urls: FederationURLs
    let actors: ActorRepository
    let articles: ArticleRepository

    static let nodeInfoSchema = "http://nodeinfo.diaspora.software/ns/schema/2.1"

    func addRoutes(to router: Router<PostlyRequestContext>) {
        router.get(".well-known/webfinger", use: webfinger)
        router.get(".well-known/nodeinfo", use: nodeInfoLinks)
        router.get("nodeinfo/2.1", use: nodeInfo)
    }

    @Sendable func webfinger(_ request: Request, context: PostlyRequestContext) async throws -> ActivityResponse {
        // An actor's own id is a resource too (some servers ask that way).
        if let resource = request.uri.queryParameters.get("resource"), let userId = urls.userId(ofActor: resource) {
            guard let actor = try await actors.actor(userId: userId) else { throw APIError.notFound("No such account here") }
            return jrd(actor)
        }
        if request.uri.queryParameters.get("resource") == urls.instanceActor { return instanceJRD() }
        guard let resource = request.uri.queryParameters.get("resource"), resource.hasPrefix("acct:"),
            let at = resource.lastIndex(of: "@"), at > resource.index(resource.startIndex, offsetBy: 5)
        else {
            throw APIError(.badRequest, code: "invalid_query", detail: "resource must be acct:handle@host")
        }
        let name = String(resource[resource.index(resource.startIndex, offsetBy: 5)..<at])
        let host = resource[resource.index(after: at)...].lowercased()
        guard host == urls.host.lowercased() else { throw APIError.notFound("No such account here") }
        // Mastodon checks an actor's `preferredUsername` (the instance actor's is the host) by
        // WebFinger before it trusts its key, so servers that ask for signed fetches need this.
        if name.lowercased() == host { return instanceJRD() }
        var found = try await actors.actor(handle: name.lowercased())
        if found == nil { found = try await actors.actor(userId: name) }
        guard let actor = found else { throw APIError.notFound("No such account here") }
        return jrd(actor)
    }

    private func jrd(_ actor: LocalActor) -> ActivityResponse {
        let id = urls.actor(actor.userId)
        return jrd(
            handle: actor.handle, aliases: [id, urls.profilePage(actor.userId)],
            links: [
                ["rel": "self", "type": "application/activity+json", "href": .string(id)],
                ["rel": "http://webfinger.net/rel/profile-page", "type": "application/json", "href": .string(urls.profilePage(actor.userId))],
            ])
    }

    private func instanceJRD() -> ActivityResponse {
        jrd(
            handle: urls.host, aliases: [urls.instanceActor],
            links: [["rel": "self", "type": "application/activity+json", "href": .string(urls.instanceActor)]])
    }

    private func jrd(handle: String, aliases: [String], links: [JSONValue]) -> ActivityResponse {
        let document: JSONValue = ["subject": .string("acct:\(handle)@\(urls.host)"), "aliases": .array(aliases.map(JSONValue.string)), "links": .array(links)]
        return ActivityResponse(document: document, contentType: "application/jrd+json; charset=utf-8", headers: [.accessControlAllowOrigin: "*"])
    }

    @Sendable func nodeInfoLinks(_ request: Request, context: PostlyRequestContext) async throws -> ActivityResponse {
        ActivityResponse(
            document: ["links": [["rel": .string(Self.nodeInfoSchema), "href": .string("\(urls.base)/nodeinfo/2.1")]]],
            contentType: "application/json; charset=utf-8")
    }

    @Sendable func nodeInfo(_ request: Request, context: PostlyRequestContext) async throws -> ActivityResponse {
        let document: JSONValue = [
            "version": "2.1",
            "software": ["name": "postly", "version": "1.0.0"],
            "protocols": ["activitypub"],
            "services": ["inbound": [], "outbound": []],
            "openRegistrations": true,
            "usage": ["users": ["total": .integer(try await actors.count())], "localPosts": .integer(try await articles.publishedCount())],
            "metadata": [:],
        ]
        return ActivityResponse(
            document: document, contentType: "application/json; charset=utf-8")
    }
}
