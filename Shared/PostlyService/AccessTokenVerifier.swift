import Foundation
import JWTKit
import Logging
import ServiceLifecycle
import Synchronization

/// Verifies access tokens with the auth service's public keys (its JWKS), which it fetches
/// at start, refreshes periodically, and refetches when a token names a key it does not
/// know yet (key rotation). Rejects what jwt-kit would not catch on its own: algorithms
/// other than the two the auth service signs with, tokens without a key id, a foreign
/// issuer, and sessions on the deny-list.
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

    static let acceptedAlgorithms: Set<String> = ["EdDSA", "ES256"]

    struct KeySet: Sendable {
        var keys = JWTKeyCollection()
        var keyIds: Set<String> = []
        var lastFetch: ContinuousClock.Instant?
    }

    private let configuration: Configuration
    private let fetchJWKS: JWKSSource
    private let denyList: SessionDenyList
    private let logger: Logger
    private let keySet = Mutex(KeySet())

    public init(configuration: Configuration, denyList: SessionDenyList, logger: Logger, fetchJWKS: @escaping JWKSSource) {
        self.configuration = configuration
        self.denyList = denyList
        self.logger = logger
        self.fetchJWKS = fetchJWKS
    }

    /// The caller behind `token`, or `APIError.unauthorized`.
    public func verify(_ token: String) async throws -> Identity {
        let header = try Self.header(of: token)
        guard let kid = header.kid, Self.acceptedAlgorithms.contains(header.alg) else {
            throw APIError.unauthorized("Invalid access token")
        }
        var keys = keySet.withLock { $0.keyIds.contains(kid) ? $0.keys : nil }
        if keys == nil {
            await refreshForUnknownKey()
            keys = keySet.withLock { $0.keyIds.contains(kid) ? $0.keys : nil }
        }
        guard let keys else { throw APIError.unauthorized("Invalid access token") }
        let claims: AccessTokenClaims
        do {
            claims = try await keys.verify(token, as: AccessTokenClaims.self)
        } catch {
            throw APIError.unauthorized("Invalid or expired access token")
        }
        guard claims.iss.value == configuration.issuer else { throw APIError.unauthorized("Invalid access token") }
        guard !denyList.isRevoked(claims.sid) else { throw APIError.unauthorized("The session has ended") }
        return Identity(userId: claims.sub.value, sessionId: claims.sid, name: claims.name, expiresAt: claims.exp.value)
    }

    /// Fetches the key set now; throws when the source is unreachable or the set is invalid.
    public func refresh() async throws {
        let json = try await fetchJWKS()
        let jwks = try JSONDecoder().decode(JWKS.self, from: Data(json.utf8))
        let keys = JWTKeyCollection()
        try await keys.add(jwks: jwks)
        let keyIds = Set(jwks.keys.compactMap { $0.keyIdentifier?.string })
        keySet.withLock {
            $0 = KeySet(keys: keys, keyIds: keyIds, lastFetch: .now)
        }
    }

    /// Periodic refresh until graceful shutdown; a failed fetch keeps the keys it had.
    public func run() async throws {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            do {
                try await refresh()
            } catch {
                logger.warning("could not refresh the auth service's keys", metadata: ["error": "\(error)"])
            }
            let hasKeys = keySet.withLock { !$0.keyIds.isEmpty }
            // Retry soon while no key is known, e.g. while the auth service is starting.
            try? await gracefulShutdownAware(sleep: hasKeys ? configuration.refreshInterval : .seconds(2))
        }
    }

    private func refreshForUnknownKey() async {
        let due = keySet.withLock { set -> Bool in
            if let last = set.lastFetch, last.duration(to: .now) < configuration.unknownKeyRefetchInterval { return false }
            set.lastFetch = .now
            return true
        }
        guard due else { return }
        do {
            try await refresh()
        } catch {
            logger.warning("could not refetch the auth service's keys", metadata: ["error": "\(error)"])
        }
    }

    struct Header: Decodable {
        var alg: String
        var kid: String?
    }

    static func header(of token: String) throws -> Header {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let data = Data(base64URLEncoded: parts[0]),
            let header = try? JSONDecoder().decode(Header.self, from: data)
        else { throw APIError.unauthorized("Invalid access token") }
        return header
    }
}

func gracefulShutdownAware(sleep duration: Duration) async throws {
    try await cancelWhenGracefulShutdown {
        try await Task.sleep(for: duration)
    }
}

extension Data {
    init?(base64URLEncoded text: Substring) {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        self.init(base64Encoded: base64)
    }
}
