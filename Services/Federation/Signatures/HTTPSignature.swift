import Crypto
import Foundation
import PostlyService

/// HTTP Signatures as the fediverse signs requests (draft-cavage-http-signatures-12, the
/// `Signature` header, `rsa-sha256`), written once: the signing of our deliveries and fetches,
/// and the checks of inbound requests that need no key (header, algorithm, covered headers,
/// `Date` window, `Digest`). The key is checked by `SignatureVerifier`.
struct HTTPSignature: Sendable, Equatable {
    var keyId: String
    /// `rsa-sha256`, or `hs2019` (which leaves the algorithm to the key: ours are RSA).
    var algorithm: String
    /// The covered headers, lower-case, in the order they were signed.
    var headers: [String]
    var signature: [UInt8]

    /// What every signature of ours covers, as Mastodon and WriteFreely sign; GETs have no digest.
    static let postHeaders = ["(request-target)", "host", "date", "digest"]
    static let getHeaders = ["(request-target)", "host", "date"]

    init(keyId: String, algorithm: String = "rsa-sha256", headers: [String], signature: [UInt8]) {
        self.keyId = keyId
        self.algorithm = algorithm
        self.headers = headers
        self.signature = signature
    }

    /// Parses a `Signature` header: comma-separated `name="value"` parameters.
    init(header: String) throws(SignatureError) {
        var parameters: [String: String] = [:]
        var rest = Substring(header)
        while !rest.isEmpty {
            rest = rest.drop { $0 == " " || $0 == "," }
            guard let equals = rest.firstIndex(of: "=") else { break }
            let name = rest[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
            rest = rest[rest.index(after: equals)...]
            let value: Substring
            if rest.first == "\"" {
                rest = rest.dropFirst()
                guard let end = rest.firstIndex(of: "\"") else { throw .malformed("an unterminated quoted value") }
                value = rest[..<end]
                rest = rest[rest.index(after: end)...]
            } else {
                let end = rest.firstIndex(of: ",") ?? rest.endIndex
                value = rest[..<end]
                rest = rest[end...]
            }
            parameters[name] = String(value)
        }
        guard let keyId = parameters["keyid"], !keyId.isEmpty else { throw .malformed("no keyId") }
        guard let encoded = parameters["signature"], let signature = Data(base64Encoded: encoded), !signature.isEmpty else {
            throw .malformed("no signature, or one that is not base64")
        }
        let algorithm = (parameters["algorithm"] ?? "hs2019").lowercased()
        guard ["rsa-sha256", "hs2019"].contains(algorithm) else { throw .unsupportedAlgorithm(algorithm) }
        // The draft's default when `headers` is absent is `date` alone.
        let covered = (parameters["headers"] ?? "date").lowercased().split(separator: " ").map(String.init)
        self.init(keyId: keyId, algorithm: algorithm, headers: covered, signature: Array(signature))
    }

    /// The header's value, parameters in the draft's order.
    var headerValue: String {
        #"keyId="\#(keyId)",algorithm="\#(algorithm)",headers="\#(headers.joined(separator: " "))",signature="\#(Data(signature).base64EncodedString())""#
    }

    /// The string signed for `request`: one `name: value` line per covered header.
    static func signingString(covering headers: [String], of request: SignedRequest) throws(SignatureError) -> String {
        var lines: [String] = []
        for name in headers {
            if name == "(request-target)" {
                lines.append("(request-target): \(request.method.lowercased()) \(request.target)")
            } else {
                guard let value = request.header(name) else { throw .coveredHeaderMissing(name) }
                lines.append("\(name): \(value)")
            }
        }
        return lines.joined(separator: "\n")
    }

    /// `SHA-256=<base64>` of `body`, the `Digest` header (RFC 3230) signed requests carry.
    static func digest(of body: some DataProtocol) -> String {
        "SHA-256=" + Data(SHA256.hash(data: body)).base64EncodedString()
    }

    /// The headers that sign `request` (a POST with `body`, or a GET without): `Host`,
    /// `Date`, `Digest` for a body, and `Signature` by `key`, named `keyId`.
    static func sign(
        method: String, url: String, body: [UInt8]?, keyId: String, key: ActorKeyPair, date: Date = Date()
    ) throws -> [(name: String, value: String)] {
        guard let parts = URLParts(url) else { throw SignatureError.malformed("the URL \(url) cannot be signed") }
        var headers: [(name: String, value: String)] = [("Host", parts.authority), ("Date", HTTPDate.format(date))]
        if let body { headers.append(("Digest", digest(of: body))) }
        let request = SignedRequest(method: method, target: parts.target, headers: headers)
        let covered = body == nil ? getHeaders : postHeaders
        let signature = try key.sign(Array(try signingString(covering: covered, of: request).utf8))
        headers.append(("Signature", HTTPSignature(keyId: keyId, headers: covered, signature: signature).headerValue))
        return headers
    }

    /// The checks of an inbound signed `request` that need no key, in the order of their
    /// reasons: what must be covered is, `Date` is within `window` of `now` (seconds, past
    /// negative), and a body matches its `Digest`. Returns the signing string to verify.
    func checkedSigningString(
        of request: SignedRequest, body: [UInt8]?, now: Date, window: ClosedRange<TimeInterval>
    ) throws(SignatureError) -> String {
        let required = body == nil ? Self.getHeaders : Self.postHeaders
        if let missing = required.first(where: { !headers.contains($0) }) { throw .headerNotSigned(missing) }
        guard let dateText = request.header("date"), let date = HTTPDate.parse(dateText) else { throw .coveredHeaderMissing("date") }
        guard window.contains(date.timeIntervalSince(now)) else { throw .dateOutsideWindow }
        if let body {
            guard let digests = request.header("digest") else { throw .coveredHeaderMissing("digest") }
            // `Digest` may list several algorithms; SHA-256 is the one Mastodon accepts.
            let sha256 = digests.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                .first { $0.lowercased().hasPrefix("sha-256=") }
            guard let sha256 else { throw .digestMismatch("no SHA-256 digest") }
            guard sha256.dropFirst("SHA-256=".count) == Self.digest(of: body).dropFirst("SHA-256=".count) else {
                throw .digestMismatch("the body does not match its Digest")
            }
        }
        return try Self.signingString(covering: headers, of: request)
    }

    /// Whether the signature is `key`'s over `signingString`.
    func isValid(signingString: String, key: PublicKey) -> Bool {
        key.isValidSignature(signature, for: Array(signingString.utf8))
    }
}

/// What a signature covers of a request: its method, target (path and query) and headers.
struct SignedRequest: Sendable {
    var method: String
    var target: String
    var headers: [(name: String, value: String)]

    /// Several values of one header are joined with `, `, as the draft says.
    func header(_ name: String) -> String? {
        let values = headers.filter { $0.name.lowercased() == name }.map { $0.value.trimmingCharacters(in: .whitespaces) }
        return values.isEmpty ? nil : values.joined(separator: ", ")
    }
}

/// Why an inbound request's signature is refused; `reason` is the 401's detail.
enum SignatureError: Error, Equatable {
    case missing
    case malformed(String)
    case unsupportedAlgorithm(String)
    case headerNotSigned(String)
    case coveredHeaderMissing(String)
    case dateOutsideWindow
    case digestMismatch(String)
    case keyUnavailable(String)
    /// The signer's server was asked for too many keys this minute (`KeyFetchBudget`): 503.
    case keyFetchesDeferred
    /// The name of the signer's server could not be looked up now (`OutboundError.resolverBusy`): 503.
    case keyLookupDeferred
    case actorIsNotKeyOwner
    case activityElsewhere
    case badSignature

    var reason: String {
        switch self {
        case .missing: "The request has no Signature header"
        case .malformed(let why): "The Signature header is malformed: \(why)"
        case .unsupportedAlgorithm(let algorithm): "The signature algorithm \(algorithm) is not supported (rsa-sha256 is)"
        case .headerNotSigned(let name): "The signature does not cover \(name)"
        case .coveredHeaderMissing(let name): "The signed header \(name) is missing or invalid"
        case .dateOutsideWindow: "The Date header is outside the accepted window (12 hours back, 1 hour ahead)"
        case .digestMismatch(let why): "The Digest does not match: \(why)"
        case .keyUnavailable(let why): "The signing key could not be fetched: \(why)"
        case .keyFetchesDeferred: "Too many keys were fetched from the signer's server this minute; send the request again later"
        case .keyLookupDeferred: "This server is too busy to fetch the signing key now; send the request again later"
        case .actorIsNotKeyOwner: "The activity's actor is not the owner of the signing key"
        case .activityElsewhere: "The activity's id is not on its actor's server"
        case .badSignature: "The signature does not verify with the actor's key"
        }
    }
}

/// The parts of an absolute http(s) URL a signature and a delivery need.
struct URLParts: Sendable, Equatable {
    var scheme: String
    /// Lower-case, without brackets for IPv6.
    var host: String
    var port: Int
    /// `host[:port]` as the `Host` header carries it (the port only when not the scheme's).
    var authority: String
    /// The path and query, `/` when empty.
    var target: String

    init?(_ url: String) {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(), ["http", "https"].contains(scheme),
            let host = components.host?.lowercased(), !host.isEmpty, components.user == nil
        else { return nil }
        self.scheme = scheme
        self.host = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        let defaultPort = scheme == "https" ? 443 : 80
        port = components.port ?? defaultPort
        let hostText = self.host.contains(":") ? "[\(self.host)]" : self.host
        authority = port == defaultPort ? hostText : "\(hostText):\(port)"
        let path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        target = components.percentEncodedQuery.map { "\(path)?\($0)" } ?? path
    }
}
