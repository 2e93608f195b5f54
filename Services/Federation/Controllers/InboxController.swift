import HTTPTypes
import Hummingbird
import PostlyService

/// `POST /ap/users/{userId}/inbox` and `POST /ap/inbox` (the shared inbox): 202 for a signed
/// activity, whatever it asks (see `InboxProcessor`). 401 `signature_invalid` naming the
/// reason, 415 for a body that is not JSON, 413 over 1 MiB, 400 `invalid_activity` (an id over
/// 2,048 bytes included), 404 for an actor that is not ours.
struct InboxController: Sendable {
    let verifier: SignatureVerifier
    let processor: InboxProcessor
    let actors: ActorRepository

    static let signature = HTTPField.Name("Signature")!

    func addRoutes(to router: Router<PostlyRequestContext>) {
        router.post("ap/inbox", use: sharedInbox)
        router.post("ap/users/:userId/inbox", use: actorInbox)
    }

    @Sendable func sharedInbox(_ request: Request, context: PostlyRequestContext) async throws -> Response {
        try await receive(request)
    }

    @Sendable func actorInbox(_ request: Request, context: PostlyRequestContext) async throws -> Response {
        let userId = try context.parameters.require("userId")
        // Unsigned requests learn nothing about which actors exist.
        guard request.headers[Self.signature] != nil else { throw SignatureError.missing }
        guard try await actors.actor(userId: userId) != nil else { throw FederationError.unknownLocalActor }
        return try await receive(request)
    }

    private func receive(_ request: Request) async throws -> Response {
        guard request.headers[Self.signature] != nil else { throw SignatureError.missing }
        guard let contentType = request.headers[.contentType], Self.isActivityJSON(contentType) else {
            throw APIError(
                .unsupportedMediaType, code: "unsupported_media_type",
                detail: "The body must be application/activity+json, application/ld+json or application/json")
        }
        var request = request
        let body = Array(try await request.collectBody(upTo: RequestLimits.maxBodyBytes).readableBytesView)
        let signer = try await verifier.signer(of: Self.signedRequest(request), body: body)
        // An id is kept in an index (repeats change nothing): a longer one failed its insert, a 500.
        guard let activity = JSONValue.parse(body), let id = activity["id"]?.string, id.utf8.count <= RemoteActors.longestURL,
            activity["type"]?.string != nil, let actor = activity["actor"]?.id
        else { throw FederationError.invalidActivity }
        guard actor == signer.id else { throw SignatureError.actorIsNotKeyOwner }
        // A server names its own activities: another's id, taken first, would make the real
        // activity a repeat, ignored.
        guard URLParts(id)?.authority == URLParts(signer.id)?.authority else { throw SignatureError.activityElsewhere }
        try await processor.receive(activity, from: signer)
        return Response(status: .accepted)
    }

    /// What the signature covers: HTTP/1's `Host` arrives as the request's authority.
    static func signedRequest(_ request: Request) -> SignedRequest {
        var headers = request.headers.map { (name: $0.name.canonicalName, value: $0.value) }
        if !headers.contains(where: { $0.name.lowercased() == "host" }), let authority = request.head.authority {
            headers.append((name: "host", value: authority))
        }
        var target = request.uri.path
        if let query = request.uri.query, !query.isEmpty { target += "?\(query)" }
        return SignedRequest(method: request.method.rawValue, target: target, headers: headers)
    }

    static func isActivityJSON(_ contentType: String) -> Bool {
        let mediaType = contentType.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
        return ["application/activity+json", "application/ld+json", "application/json"].contains(mediaType)
    }
}
