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
    /// `BCRYPT_CONCURRENCY`: password hashes running at once (default half the cores, at least
    /// 1), so sign-ins never take every core from the other services.
    public var hashesAtOnce: Int
    /// `BCRYPT_QUEUE`: hashes waiting for a turn (default 16); beyond that a sign-in answers
    /// 503 with `Retry-After`.
    public var hashesWaiting: Int
    /// `ACCESS_TOKEN_TTL_SECONDS` (default 7 days: the existing clients never refresh).
    public var accessTokenLifetime: TimeInterval
    /// `REFRESH_TOKEN_TTL_SECONDS` (default 30 days).
    public var refreshTokenLifetime: TimeInterval
    /// `REFRESH_REUSE_GRACE_SECONDS` (default 10): a spent refresh token presented again within
    /// this answers the same new pair, once (a retry, a second tab); later it revokes the session.
    public var refreshReplayGrace: Duration
    /// `LOGIN_FAILURES_PER_EMAIL` (10), `LOGIN_FAILURES_PER_CLIENT` (30) within
    /// `LOGIN_FAILURE_WINDOW_SECONDS` (60): above that, logins answer 429 (past the email's
    /// limit, to every address but those that signed into the account within 90 days, the
    /// right password too).
    public var loginLimits: LoginRateLimiter.Limits
    /// `GOOGLE_ISSUER`, `GOOGLE_JWKS_URL`, `GOOGLE_CLIENT_IDS` (comma separated).
    public var google: GoogleIDTokenVerifier.Configuration

    public init(environment: Environment = Environment()) {
        service = ServiceConfiguration(name: "auth", defaultPort: 8081, environment: environment)
        bcryptCost = environment.integer("BCRYPT_COST", default: 12, in: PasswordHasher.costRange)
        hashesAtOnce = environment.integer("BCRYPT_CONCURRENCY", default: max(1, ProcessInfo.processInfo.activeProcessorCount / 2), in: 1...1_024)
        hashesWaiting = environment.integer("BCRYPT_QUEUE", default: 16, in: 0...100_000)
        accessTokenLifetime = TimeInterval(environment.integer("ACCESS_TOKEN_TTL_SECONDS", default: 7 * 86_400, in: 1...Int.max))
        refreshTokenLifetime = TimeInterval(environment.integer("REFRESH_TOKEN_TTL_SECONDS", default: 30 * 86_400, in: 1...Int.max))
        refreshReplayGrace = .seconds(environment.integer("REFRESH_REUSE_GRACE_SECONDS", default: 10, in: 0...300))
        loginLimits = LoginRateLimiter.Limits(
            failuresPerEmail: environment.integer("LOGIN_FAILURES_PER_EMAIL", default: 10, in: 1...Int.max),
            failuresPerClient: environment.integer("LOGIN_FAILURES_PER_CLIENT", default: 30, in: 1...Int.max),
            window: .seconds(environment.integer("LOGIN_FAILURE_WINDOW_SECONDS", default: 60, in: 1...86_400)))
        google = GoogleIDTokenVerifier.Configuration(
            issuer: environment.string("GOOGLE_ISSUER", default: "https://accounts.google.com"),
            jwksURL: environment.string("GOOGLE_JWKS_URL", default: "https://www.googleapis.com/oauth2/v3/certs"),
            clientIds: environment.list("GOOGLE_CLIENT_IDS"))
    }
}
