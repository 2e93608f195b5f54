import Foundation
import JWTKit
import Logging
import PostlyEvents
import ServiceLifecycle
import Synchronization

/// Verifies access tokens with the auth service's public keys (its JWKS), which it fetches
/// at start, refreshes periodically, and refetches when a token names a key it does not
/// know yet (key rotation). Rejects what jwt-kit would not catch on its own: any algorithm
/// but the one the auth service signs with (EdDSA), tokens without a key id, a foreign
/// issuer, and sessions on the deny-list; `AccessTokenClaims` checks expiry and audience.
public final class AccessTokenVerifier: Service, Sendable {
    public struct Configuration: Sendable {
        /// `iss` of every accepted token.
        public var issuer: String
        public var refreshInterval: Duration
        /// How often an unknown `kid` may trigger a refetch, so garbage tokens cannot
        /// hammer the auth service.
        public var unknownKeyRefetchInterval: Duration

        public init(issuer: String = "postly-auth", refreshInterval: Duration = .seconds(300), unknownKeyRefetchInterval: Duration = .seconds(5)) {
            self.issuer = issuer
            self.refreshInterval = refreshInterval
            self.unknownKeyRefetchInterval = unknownKeyRefetchInterval
        }
    }

    /// Returns the JWKS document as JSON.
    public typealias JWKSSource = @Sendable () async throws -> String

    static let acceptedAlgorithms: Set<String> = ["EdDSA"]

    private let configuration: Configuration
    private let keySet: JWKSCache
    private let source: KeySource
    private let denyList: SessionDenyList
    private let logger: Logger
    /// Tokens whose signature was checked, with the keys that checked it: an Ed25519 signature
    /// costs about 50 µs, as much as a cached read's own work, and a client sends one token
    /// with every request until it expires. An entry counts only while those keys are the
    /// current ones (a refresh or a rotation makes new ones); expiry, audience, issuer and the
    /// deny-list are checked on every request.
    private let checked = Mutex(LeastRecentlyUsed<String, CheckedToken>(maxBytes: 16 << 20, maxEntries: 20_000))

    public init(configuration: Configuration, denyList: SessionDenyList, logger: Logger, fetchJWKS: @escaping JWKSSource) {
        self.configuration = configuration
        self.denyList = denyList
        self.logger = logger
        let source = KeySource(fetchJWKS)
        self.source = source
        self.keySet = JWKSCache(lifetime: nil, unknownKeyRefetchInterval: configuration.unknownKeyRefetchInterval) {
            try JSONDecoder().decode(JWKS.self, from: Data(try await source.fetch().utf8)).keys
        }
    }

    /// Verifies with the keys `fetchJWKS` gives from now on: the auth service verifies its
    /// own tokens with the keys it signs with, which exist only once its database does.
    public func useKeys(from fetchJWKS: @escaping JWKSSource) {
        source.replace(with: fetchJWKS)
    }

    /// The caller behind `token`; `APIError.unauthorized`, or `APIError.unavailable` when
    /// the auth service's keys cannot be fetched to check it.
    public func verify(_ token: String) async throws -> Identity {
        guard let header = JWTHeader(of: token), let kid = header.kid, Self.acceptedAlgorithms.contains(header.alg) else {
            throw APIError.unauthorized("Invalid access token")
        }
        let keys: JWTKeyCollection?
        do {
            keys = try await keySet.keys(for: kid)
        } catch {
            throw APIError.unavailable("The auth service's keys are unavailable")
        }
        guard let keys else { throw APIError.unauthorized("Invalid access token") }
        let claims: AccessTokenClaims
        do {
            claims = try await self.claims(of: token, signedFor: keys)
        } catch {
            throw APIError.unauthorized("Invalid or expired access token")
        }
        guard claims.iss.value == configuration.issuer else { throw APIError.unauthorized("Invalid access token") }
        guard !denyList.isRevoked(claims.sid) else { throw APIError.unauthorized("The session has ended") }
        return Identity(userId: claims.sub.value, sessionId: claims.sid, name: claims.name, expiresAt: claims.exp.value)
    }

    /// The token's claims, its signature checked with `keys` unless it was already.
    private func claims(of token: String, signedFor keys: JWTKeyCollection) async throws -> AccessTokenClaims {
        if let known = checked.withLock({ $0.value(of: token) }), known.keys === keys {
            try known.claims.verifyStillValid()
            return known.claims
        }
        let claims = try await keys.verify(token, as: AccessTokenClaims.self)
        _ = checked.withLock { $0.insert(CheckedToken(keys: keys, claims: claims), bytes: token.utf8.count + 256, for: token) }
        return claims
    }

    /// Whether any key is known: until then every token answers 503.
    public var hasKeys: Bool { keySet.hasKeys }

    /// Fetches the key set now; throws when the source is unreachable or the set is invalid.
    public func refresh() async throws {
        try await keySet.refreshOrThrow()
    }

    /// Periodic refresh until graceful shutdown; a failed fetch keeps the keys it had.
    public func run() async throws {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            do {
                try await refresh()
            } catch {
                logger.warning("could not refresh the auth service's keys", metadata: ["error": "\(error)"])
            }
            // Retry soon while no key is known, e.g. while the auth service is starting.
            await sleepUnlessShuttingDown(for: keySet.hasKeys ? configuration.refreshInterval : .seconds(2))
        }
    }
}

private struct CheckedToken: Sendable {
    var keys: JWTKeyCollection
    var claims: AccessTokenClaims
}

/// Where the key set comes from; replaced at most once, before the service answers.
private final class KeySource: Sendable {
    private let current: Mutex<AccessTokenVerifier.JWKSSource>

    init(_ fetch: @escaping AccessTokenVerifier.JWKSSource) {
        current = Mutex(fetch)
    }

    func replace(with fetch: @escaping AccessTokenVerifier.JWKSSource) {
        current.withLock { $0 = fetch }
    }

    func fetch() async throws -> String {
        try await current.withLock { $0 }()
    }
}
