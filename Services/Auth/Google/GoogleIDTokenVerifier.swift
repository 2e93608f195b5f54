import Foundation
import JWTKit
import Logging
import PostlyCurl
import PostlyService
import Synchronization

/// Verifies Google ID tokens: the signature with the issuer's published keys (fetched through
/// the libcurl client, cached, fetched again when a token names a key not seen yet, at most
/// once per `unknownKeyRefetchInterval`), then `iss`, `aud` (one of the configured client
/// ids), `exp` and `email_verified`.
public final class GoogleIDTokenVerifier: Sendable {
    public struct Configuration: Sendable {
        /// `iss` of accepted tokens (Google's tokens say it with or without `https://`).
        public var issuer: String
        public var jwksURL: String
        /// The OAuth client ids tokens must be issued to; none configured rejects every token.
        public var clientIds: [String]
        public var cacheLifetime: Duration
        public var unknownKeyRefetchInterval: Duration

        public init(
            issuer: String, jwksURL: String, clientIds: [String],
            cacheLifetime: Duration = .seconds(3600), unknownKeyRefetchInterval: Duration = .seconds(10)
        ) {
            self.issuer = issuer
            self.jwksURL = jwksURL
            self.clientIds = clientIds
            self.cacheLifetime = cacheLifetime
            self.unknownKeyRefetchInterval = unknownKeyRefetchInterval
        }

        var acceptedIssuers: Set<String> {
            let bare = issuer.hasPrefix("https://") ? String(issuer.dropFirst("https://".count)) : issuer
            // Google writes its issuer both ways; other issuers only as configured.
            return bare == "accounts.google.com" ? [issuer, bare, "https://" + bare] : [issuer]
        }
    }

    struct Cache: Sendable {
        var keys = JWTKeyCollection()
        var keyIds: Set<String> = []
        var fetchedAt: ContinuousClock.Instant?
    }

    private let configuration: Configuration
    private let httpClient: CurlHTTPClient
    private let logger: Logger
    private let cache = Mutex(Cache())

    public init(configuration: Configuration, httpClient: CurlHTTPClient, logger: Logger) {
        self.configuration = configuration
        self.httpClient = httpClient
        self.logger = logger
    }

    static let invalid = APIError.unauthorized("Invalid Google ID token")

    /// Who the token says signed in, or 401.
    public func verify(_ token: String) async throws -> GoogleIdentity {
        guard let header = Self.header(of: token), header.alg == "RS256", let kid = header.kid else { throw Self.invalid }
        let keys = try await keys(for: kid)
        let claims: GoogleIDTokenClaims
        do {
            claims = try await keys.verify(token, as: GoogleIDTokenClaims.self)
        } catch {
            throw Self.invalid
        }
        guard configuration.acceptedIssuers.contains(claims.iss.value),
            claims.aud.value.contains(where: { configuration.clientIds.contains($0) })
        else { throw Self.invalid }
        guard let email = claims.email.map(AuthValidation.normalizedEmail), !email.isEmpty, claims.emailVerified?.value == true else {
            throw APIError.unauthorized("The Google account's email is not verified")
        }
        let name = claims.name?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        return GoogleIdentity(
            subject: claims.sub.value, email: email,
            name: name.isEmpty ? String(email.prefix { $0 != "@" }) : String(name.prefix(100)),
            picture: claims.picture.flatMap { $0.isEmpty ? nil : $0 })
    }

    /// The cached keys when they know `kid` and are fresh, else fetched ones.
    private func keys(for kid: String) async throws -> JWTKeyCollection {
        let lifetime = configuration.cacheLifetime
        let refetchInterval = configuration.unknownKeyRefetchInterval
        enum Decision: Sendable { case use(JWTKeyCollection), fetch, reject }
        let decision = cache.withLock { cache -> Decision in
            let age = cache.fetchedAt.map { $0.duration(to: .now) }
            if cache.keyIds.contains(kid), let age, age < lifetime { return .use(cache.keys) }
            if let age, age < refetchInterval {
                // Fetched a moment ago: an unknown kid now is not Google's, so don't ask again.
                return cache.keyIds.contains(kid) ? .use(cache.keys) : .reject
            }
            return .fetch
        }
        switch decision {
        case .use(let keys): return keys
        case .reject: throw Self.invalid
        case .fetch: break
        }
        do {
            try await fetch()
        } catch {
            logger.warning("could not fetch the Google sign-in keys", metadata: ["error": "\(error)"])
            // Keep using keys we have; without any, say the dependency is down.
            if let keys = cache.withLock({ $0.keyIds.contains(kid) ? $0.keys : nil }) { return keys }
            throw APIError.unavailable("Google sign-in is unavailable")
        }
        guard let keys = cache.withLock({ $0.keyIds.contains(kid) ? $0.keys : nil }) else { throw Self.invalid }
        return keys
    }

    private func fetch() async throws {
        let response = try await httpClient.execute(.get(configuration.jwksURL))
        guard response.status == 200 else { throw APIError.unavailable("Google sign-in is unavailable") }
        let jwks = try JSONDecoder().decode(JWKS.self, from: Data(response.body))
        let keys = JWTKeyCollection()
        var keyIds: Set<String> = []
        for jwk in jwks.keys where jwk.keyType == .rsa {
            guard let kid = jwk.keyIdentifier else { continue }
            // Google's keys may omit `alg`; they are RS256 keys.
            var key = jwk
            if key.algorithm == nil { key.algorithm = .rs256 }
            guard key.algorithm == .rs256 else { continue }
            try await keys.add(jwk: key)
            keyIds.insert(kid.string)
        }
        cache.withLock { $0 = Cache(keys: keys, keyIds: keyIds, fetchedAt: .now) }
    }

    struct Header: Decodable {
        var alg: String
        var kid: String?
    }

    static func header(of token: String) -> Header? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { return nil }
        var base64 = parts[0].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard let data = Data(base64Encoded: base64) else { return nil }
        return try? JSONDecoder().decode(Header.self, from: data)
    }
}
