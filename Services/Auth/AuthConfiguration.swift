import Foundation
import PostlyService

/// The auth service's environment, read in one place. Every variable has a working local
/// default and a line in the README.
public struct AuthConfiguration: Sendable {
    /// `HOST`, `PORT` (8081), `POSTGRES_*` (database `postly_auth`), `KAFKA_BROKERS`,
    /// `AUTH_ISSUER` (the `iss` of the tokens this service signs).
    public var service: ServiceConfiguration
    /// `BCRYPT_COST`: bcrypt's work factor for new password hashes (4...31, default 12).
    public var bcryptCost: Int
    /// `ACCESS_TOKEN_TTL_SECONDS` (default 7 days: the existing clients never refresh).
    public var accessTokenLifetime: TimeInterval
    /// `REFRESH_TOKEN_TTL_SECONDS` (default 30 days).
    public var refreshTokenLifetime: TimeInterval
    /// `LOGIN_FAILURES_PER_EMAIL` (10), `LOGIN_FAILURES_PER_CLIENT` (30) within
    /// `LOGIN_FAILURE_WINDOW_SECONDS` (60): above that, logins answer 429.
    public var loginLimits: LoginRateLimiter.Limits
    /// `GOOGLE_ISSUER`, `GOOGLE_JWKS_URL`, `GOOGLE_CLIENT_IDS` (comma separated).
    public var google: GoogleIDTokenVerifier.Configuration

    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        func value(_ key: String) -> String? { environment[key].flatMap { $0.isEmpty ? nil : $0 } }
        func number(_ key: String, _ fallback: Int) -> Int { value(key).flatMap { Int($0) } ?? fallback }
        service = ServiceConfiguration(name: "auth", defaultPort: 8081, environment: environment)
        bcryptCost = min(max(number("BCRYPT_COST", 12), PasswordHasher.costRange.lowerBound), PasswordHasher.costRange.upperBound)
        accessTokenLifetime = TimeInterval(number("ACCESS_TOKEN_TTL_SECONDS", 7 * 86_400))
        refreshTokenLifetime = TimeInterval(number("REFRESH_TOKEN_TTL_SECONDS", 30 * 86_400))
        loginLimits = LoginRateLimiter.Limits(
            failuresPerEmail: number("LOGIN_FAILURES_PER_EMAIL", 10),
            failuresPerClient: number("LOGIN_FAILURES_PER_CLIENT", 30),
            window: .seconds(number("LOGIN_FAILURE_WINDOW_SECONDS", 60)))
        google = GoogleIDTokenVerifier.Configuration(
            issuer: value("GOOGLE_ISSUER") ?? "https://accounts.google.com",
            jwksURL: value("GOOGLE_JWKS_URL") ?? "https://www.googleapis.com/oauth2/v3/certs",
            clientIds: (value("GOOGLE_CLIENT_IDS") ?? "").split(separator: ",")
                .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty })
    }
}
