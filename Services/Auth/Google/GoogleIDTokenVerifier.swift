import Foundation
import JWTKit
import Logging
import PostlyCurl
import PostlyModels
import PostlyService

/// Verifies Google ID tokens: the signature with the issuer's published keys (fetched through
/// the libcurl client and kept in a `JWKSCache`, fetched again when a token names a key not seen yet, at most
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

    private let configuration: Configuration
    private let keySet: JWKSCache

    public init(configuration: Configuration, httpClient: CurlHTTPClient, logger: Logger) {
        self.configuration = configuration
        let jwksURL = configuration.jwksURL
        self.keySet = JWKSCache(lifetime: configuration.cacheLifetime, unknownKeyRefetchInterval: configuration.unknownKeyRefetchInterval) {
            do {
                return try await Self.fetchKeys(from: jwksURL, with: httpClient)
            } catch {
                logger.warning("could not fetch the Google sign-in keys", metadata: ["error": "\(error)"])
                throw error
            }
        }
    }

    static let invalid = APIError.unauthorized("Invalid Google ID token")

    /// Who the token says signed in, or 401.
    public func verify(_ token: String) async throws -> GoogleIdentity {
        // No client id configured: no token can be for us, and Google's keys are not worth a fetch.
        guard !configuration.clientIds.isEmpty, let header = JWTHeader(of: token), header.alg == "RS256", let kid = header.kid else { throw Self.invalid }
        let keys: JWTKeyCollection?
        do {
            keys = try await keySet.keys(for: kid)
        } catch {
            throw APIError.unavailable("Google sign-in is unavailable")
        }
        guard let keys else { throw Self.invalid }
        let claims: GoogleIDTokenClaims
        do {
            claims = try await keys.verify(token, as: GoogleIDTokenClaims.self)
        } catch {
            throw Self.invalid
        }
        guard configuration.acceptedIssuers.contains(claims.iss.value),
            claims.aud.value.contains(where: { configuration.clientIds.contains($0) })
        else { throw Self.invalid }
        guard let email = claims.email.map(EmailAddress.normalized), !email.isEmpty, claims.emailVerified?.value == true else {
            throw APIError.unauthorized("The Google account's email is not verified")
        }
        // Blank once cut to length (invisible characters first), it is the email's local part.
        let name = AuthValidation.nameLimit.truncated(claims.name?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "")
        return GoogleIdentity(
            subject: claims.sub.value, email: email,
            name: TextLimit.isBlank(name) ? AuthValidation.nameLimit.truncated(String(email.prefix { $0 != "@" })) : name,
            picture: claims.picture.flatMap { $0.isEmpty ? nil : $0 })
    }

    /// Google's RSA keys; they may omit `alg`, they are RS256 keys.
    private static func fetchKeys(from url: String, with httpClient: CurlHTTPClient) async throws -> [JWK] {
        let response = try await httpClient.execute(.get(url))
        guard response.status == 200 else { throw JWKSCache.Unavailable() }
        let jwks = try JSONDecoder().decode(JWKS.self, from: Data(response.body))
        return jwks.keys.compactMap { jwk in
            guard jwk.keyType == .rsa, jwk.keyIdentifier != nil else { return nil }
            var key = jwk
            if key.algorithm == nil { key.algorithm = .rs256 }
            return key.algorithm == .rs256 ? key : nil
        }
    }
}
