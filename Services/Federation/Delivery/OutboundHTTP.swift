import Foundation
import Metrics
import PostlyCurl

/// Every request the service makes to the fediverse: signed, with a timeout, and only to
/// public addresses (unless the tests allow private networks). A host name is resolved here,
/// every address it has must be public, and the request is pinned to the one checked, so a
/// name that resolves differently a moment later cannot lead it elsewhere.
struct OutboundHTTP: Sendable {
    let client: CurlHTTPClient
    let allowPrivateNetworks: Bool
    let timeout: Duration
    var resolver: HostResolver = .shared

    /// What signing one delivery costs (digest and RSA signature).
    static let signing = Metrics.Timer(label: "postly_federation_signing_seconds")

    static let activityAccept = #"application/activity+json, application/ld+json; profile="https://www.w3.org/ns/activitystreams""#

    /// A GET of an ActivityPub document, signed by `key` as `keyId`, ended by `deadline` if its
    /// own timeout has not ended it before.
    func get(_ url: String, keyId: String, key: ActorKeyPair, by deadline: ContinuousClock.Instant) async throws -> CurlHTTPClient.Response {
        let headers = try HTTPSignature.sign(method: "GET", url: url, body: nil, keyId: keyId, key: key)
        return try await send(
            .init(method: "GET", url: url, headers: headers + [("Accept", Self.activityAccept)], maxResponseBytes: 1 << 20),
            by: min(deadline, .now + timeout))
    }

    /// A POST of an activity, signed by `key` as `keyId`: its answer's status, without its
    /// body, of which at most 64 KiB is read (a gone server's long error page lost the status,
    /// and it was retried for days; a hostile one could make us download for the whole timeout).
    func post(_ url: String, body: [UInt8], keyId: String, key: ActorKeyPair) async throws -> CurlHTTPClient.Response {
        let started = ContinuousClock.now
        let headers = try HTTPSignature.sign(method: "POST", url: url, body: body, keyId: keyId, key: key)
        Self.signing.recordSeconds(started.duration(to: .now).seconds)
        var request = CurlHTTPClient.Request(
            method: "POST", url: url, headers: headers + [("Content-Type", "application/activity+json")], body: body, maxResponseBytes: 64 << 10)
        request.keepsBody = false
        return try await send(request, by: .now + timeout)
    }

    /// `request`, its name lookup included, ended by `deadline`.
    private func send(_ request: CurlHTTPClient.Request, by deadline: ContinuousClock.Instant) async throws -> CurlHTTPClient.Response {
        var request = request
        guard ContinuousClock.now < deadline else { throw CurlError.timeout }
        request.resolve = try await pinnedAddress(of: request.url, within: ContinuousClock.now.duration(to: deadline))
        request.timeout = ContinuousClock.now.duration(to: deadline)  // curl takes at least 1 ms
        return try await client.execute(request)
    }

    /// curl's `HOST:PORT:ADDRESS` pin for `url`'s host, after checking its addresses (looked up
    /// for `limit` at most, when given).
    func pinnedAddress(of url: String, within limit: Duration? = nil) async throws -> [String] {
        guard let parts = URLParts(url) else { throw OutboundError.invalidURL }
        guard !allowPrivateNetworks else { return [] }
        guard case .addresses(let addresses) = await resolver.addresses(of: parts.host, within: limit) else {
            throw OutboundError.resolverBusy
        }
        guard let first = addresses.first else { throw OutboundError.unresolvable(parts.host) }
        guard addresses.allSatisfy(PublicAddress.isPublic) else { throw OutboundError.privateAddress(parts.host) }
        let pinned = first.contains(":") ? "[\(first)]" : first
        return ["\(parts.host):\(parts.port):\(pinned)"]
    }
}

enum OutboundError: Error, Equatable, CustomStringConvertible {
    case invalidURL
    case unresolvable(String)
    case privateAddress(String)
    /// Our resolver had no thread for the name in time (`HostResolver.Answer.busy`): nothing is
    /// known of the host, and nothing is held against it.
    case resolverBusy

    var description: String {
        switch self {
        case .invalidURL: "not an absolute http(s) URL"
        case .unresolvable(let host): "\(host) does not resolve"
        case .privateAddress(let host): "\(host) resolves to a loopback or private address"
        case .resolverBusy: "no name lookup could be made in time: other hosts' lookups held every thread"
        }
    }

    /// Whether asking again later cannot help: a name that does not resolve now (a lapsed
    /// record, a resolver down) may tomorrow, so it is retried on the schedule like a 503.
    var isPermanent: Bool {
        switch self {
        case .invalidURL, .privateAddress: true
        case .unresolvable, .resolverBusy: false
        }
    }

    /// What a peer is told (the logs keep `description`): whether a name resolves here, and to
    /// what kind of address, is none of its business; an inbox that said so would map our
    /// internal names for anyone who asks.
    var peerDescription: String {
        switch self {
        case .invalidURL: description
        case .unresolvable, .privateAddress: "its host is not a public address this server reaches"
        case .resolverBusy: "this server is busy; try again later"
        }
    }
}
