import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import PostlyModels
import PostlyPostgres
import PostlyService
import Testing
import TestSupport

@testable import FederationService

/// The federation service built as `main` builds it (ids under `FederationTestService.base`,
/// private networks allowed, retries after 100 ms), on a database of its own; events are
/// applied as its consumer applies them.
struct FederationTestService: Sendable {
    static let base = "http://127.0.0.1:8080"
    static let host = "127.0.0.1:8080"
    let harness: ServiceTestHarness
    let urls = FederationURLs(permalink: Permalink(baseURL: Self.base))

    static func run(
        allowPrivateNetworks: Bool = true, deliveryConcurrency: Int = 64,
        configure: @escaping @Sendable (inout FederationConfiguration) -> Void = { _ in },
        _ body: @escaping @Sendable (FederationTestService) async throws -> Void
    ) async throws {
        try await ServiceTestHarness.run { setup in
            var configuration = FederationConfiguration(environment: [
                "PUBLIC_BASE_URL": base, "FEDERATION_ALLOW_PRIVATE_NETWORKS": allowPrivateNetworks ? "1" : "0",
                "FEDERATION_RETRY_BASE_MS": "100", "FEDERATION_POLL_MS": "50",
                "FEDERATION_DELIVERY_CONCURRENCY": "\(deliveryConcurrency)",
            ])
            configuration.service.postgres = setup.postgres
            configuration.service.kafka = setup.kafka
            configure(&configuration)
            return try buildApplication(configuration, logger: testLogger, options: setup.options)
        } _: { harness in
            try await body(FederationTestService(harness: harness))
        }
    }

    /// Applies `events` as the consumer would (without its Kafka part).
    func apply(_ events: Event...) async throws {
        let handler = FederationEventHandler(documents: ActivityDocuments(urls: urls), keys: ActorKeys(database: harness.database))
        try await harness.database.transaction { connection in
            for event in events { try await handler.apply(event, in: connection) }
        }
    }

    func get(_ path: String) async throws -> TestAnswer {
        try await harness.request(.get, path)
    }

    /// Posts `activity` to `path` signed as `peer` (with `key`, the peer's own unless given;
    /// as `Host: localhost`, what the test router sees), altered by `alter` after signing.
    func post(
        _ activity: JSONValue, to path: String, signedBy peer: RemotePeer, key: ActorKeyPair? = nil, keyId: String? = nil, date: Date = Date(),
        alter: (inout [(name: String, value: String)], inout [UInt8]) -> Void = { _, _ in }
    ) async throws -> TestAnswer {
        var body = activity.bytes
        var headers = try HTTPSignature.sign(method: "POST", url: "http://localhost\(path)", body: body, keyId: keyId ?? peer.keyId, key: key ?? peer.key, date: date)
        headers.removeAll { $0.name == "Host" }
        alter(&headers, &body)
        var fields = HTTPFields()
        fields[.contentType] = "application/activity+json"
        for header in headers { fields.append(HTTPField(name: HTTPField.Name(header.name)!, value: header.value)) }
        return try await harness.request(.post, path, json: String(decoding: body, as: UTF8.self), headers: fields)
    }

    /// Our actor's public key, as its document publishes it.
    func publicKey(of userId: String) async throws -> PublicKey {
        let person = try await get("/ap/users/\(userId)")
        let pem = try #require(JSONValue.parse(Array(person.body))?["publicKey"]?["publicKeyPem"]?.string)
        return try PublicKey(pem: pem)
    }

    func count(_ sql: SQL) async throws -> Int {
        try await harness.database.query(sql).first?.decode(0, as: Int.self) ?? 0
    }
}

func userEvent(_ user: UserSnapshot, sequence: Int64, registered: Bool = false) -> Event {
    Event(producer: "auth", key: user.userId, sequence: sequence, actorId: user.userId, data: registered ? .userRegistered(user) : .userUpdated(user))
}

enum PostChange { case created, updated, deleted }

func postEvent(
    _ change: PostChange, id: String, title: String = "A post", content: String = "Text", status: PostStatus = .published,
    author: Author, sequence: Int64
) -> Event {
    let snapshot = PostSnapshot.sample(
        id: id, title: title, content: content, status: status, author: author, deleted: change == .deleted, version: Int(sequence))
    let data: EventData =
        switch change {
        case .created: .postCreated(snapshot)
        case .updated: .postUpdated(snapshot)
        case .deleted: .postDeleted(snapshot)
        }
    return Event(producer: "posts", key: id, sequence: sequence, actorId: author.userId, data: data)
}

/// A remote instance on loopback: one actor with a key, an inbox and a shared inbox that keep
/// what they receive and answer `answer` (202 unless a test says otherwise).
final class RemotePeer: Sendable {
    struct Received: Sendable {
        var path: String
        var headers: [(name: String, value: String)]
        var body: [UInt8]
        var activity: JSONValue? { JSONValue.parse(body) }
    }

    let key: ActorKeyPair
    let base: String
    let received = Locked<[Received]>([])
    let answer = Locked<(status: HTTPResponse.Status, headers: HTTPFields)>((.accepted, [:]))
    /// How many bytes of body the answer carries (an error page).
    let answerBodyBytes = Locked(0)
    /// How long the next activity received waits for its answer (once).
    let nextAnswerDelay = Locked<Duration?>(nil)
    /// The owner `/key` names: the peer's actor unless a test says otherwise.
    let claimedOwner = Locked<String?>(nil)
    /// The id the actor document at `/actor` gives, when a test has the actor take another.
    let renamedActorId = Locked<String?>(nil)
    /// The inboxes the actor document gives, when a test has them point elsewhere.
    let publishedInboxes = Locked<(inbox: String, shared: String)?>(nil)
    /// What `/media/{name}` serves (a file anyone may upload to the peer's server).
    let upload = Locked<JSONValue?>(nil)
    /// How long the actor documents take to answer.
    let documentDelay = Locked<Duration?>(nil)
    /// How many times `/keys/{n}`, where no key is, was asked for.
    let missingKeyFetches = Locked(0)
    /// How many times `/actor` was asked for.
    let actorFetches = Locked(0)

    var actorId: String { base + "/actor" }
    var keyId: String { actorId + "#main-key" }
    var inbox: String { base + "/inbox" }
    var sharedInbox: String { base + "/shared-inbox" }

    private init(key: ActorKeyPair, base: String) {
        self.key = key
        self.base = base
    }

    static func with<T: Sendable>(key: ActorKeyPair? = nil, _ body: (RemotePeer) async throws -> T) async throws -> T {
        let key = try key ?? ActorKeyPair.generate()
        let peer = Locked<RemotePeer?>(nil)
        let router = Router()
        router.get("actor") { _, _ -> Response in
            guard let peer = peer.value else { return Response(status: .serviceUnavailable) }
            peer.actorFetches.withLock { $0 += 1 }
            if let delay = peer.documentDelay.value { try await Task.sleep(for: delay) }
            return Response(
                status: .ok, headers: [.contentType: "application/activity+json"],
                body: .init(byteBuffer: ByteBuffer(bytes: peer.actorDocument.bytes)))
        }
        router.get("keys/:n") { _, _ -> Response in
            peer.value?.missingKeyFetches.withLock { $0 += 1 }
            return Response(status: .notFound)
        }
        // Other actors of the same server, with the same key under their own key ids.
        router.get("users/:name") { _, context -> Response in
            guard let peer = peer.value, let name = context.parameters.get("name") else { return Response(status: .serviceUnavailable) }
            if let delay = peer.documentDelay.value { try await Task.sleep(for: delay) }
            // A renamed actor lives at its new id.
            let id = peer.base + "/users/" + name
            let document = peer.renamedActorId.value == id ? peer.actorDocument : peer.actorDocument(id: id)
            return Response(
                status: .ok, headers: [.contentType: "application/activity+json"], body: .init(byteBuffer: ByteBuffer(bytes: document.bytes)))
        }
        router.get("media/:name") { _, _ -> Response in
            guard let upload = peer.value?.upload.value else { return Response(status: .notFound) }
            return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: upload.bytes)))
        }
        // A key of its own that claims another actor as its owner (for a test of impostors).
        router.get("key") { _, _ -> Response in
            guard let peer = peer.value else { return Response(status: .serviceUnavailable) }
            let key: JSONValue = [
                "id": .string(peer.base + "/key"), "owner": .string(peer.claimedOwner.value ?? peer.actorId), "publicKeyPem": .string(peer.key.publicKeyPEM),
            ]
            return Response(status: .ok, headers: [.contentType: "application/activity+json"], body: .init(byteBuffer: ByteBuffer(bytes: key.bytes)))
        }
        for path in ["inbox", "shared-inbox"] {
            router.post(.init(path)) { request, _ -> Response in
                var request = request
                let body = Array(try await request.collectBody(upTo: 1 << 20).readableBytesView)
                guard let peer = peer.value else { return Response(status: .serviceUnavailable) }
                var headers = request.headers.map { (name: $0.name.canonicalName, value: $0.value) }
                if let authority = request.head.authority { headers.append((name: "host", value: authority)) }
                peer.received.withLock { $0.append(Received(path: "/" + path, headers: headers, body: body)) }
                let delay = peer.nextAnswerDelay.withLock { delay in
                    defer { delay = nil }
                    return delay
                }
                if let delay { try await Task.sleep(for: delay) }
                let answer = peer.answer.value
                let page = ByteBuffer(repeating: UInt8(ascii: "x"), count: peer.answerBodyBytes.value)
                return Response(status: answer.status, headers: answer.headers, body: .init(byteBuffer: page))
            }
        }
        return try await withLoopbackServer(router) { base in
            let made = RemotePeer(key: key, base: base)
            peer.withLock { $0 = made }
            return try await body(made)
        }
    }

    var actorDocument: JSONValue {
        actorDocument(id: renamedActorId.value ?? actorId, keyId: keyId)
    }

    /// An actor of this server with the peer's key (or `publicKeyPEM`), under `keyId` (its own
    /// `#main-key` unless given).
    func actorDocument(id: String, keyId: String? = nil, publicKeyPEM: String? = nil) -> JSONValue {
        let keyId = keyId ?? id + "#main-key"
        return [
            "@context": ["https://www.w3.org/ns/activitystreams", "https://w3id.org/security/v1"], "id": .string(id), "type": "Person",
            "preferredUsername": "bob", "inbox": .string(publishedInboxes.value?.inbox ?? inbox),
            "endpoints": ["sharedInbox": .string(publishedInboxes.value?.shared ?? sharedInbox)],
            "publicKey": ["id": .string(keyId), "owner": .string(id), "publicKeyPem": .string(publicKeyPEM ?? key.publicKeyPEM)],
        ]
    }

    func follow(_ actor: String, id: String = UUID().uuidString) -> JSONValue {
        ["@context": "https://www.w3.org/ns/activitystreams", "id": .string("\(base)/follows/\(id)"), "type": "Follow", "actor": .string(actorId), "object": .string(actor)]
    }

    /// What arrived of `type` so far.
    func activities(_ type: String) -> [Received] {
        received.value.filter { $0.activity?["type"]?.string == type }
    }
}
