import Foundation
import PostlyModels
import PostlyService

/// The images service's environment, read here and nowhere else.
public struct ImagesConfiguration: Sendable {
    /// `HOST`, `PORT` (default 8085), `LOG_LEVEL`, `AUTH_JWKS_URL`, `AUTH_ISSUER`, `POSTGRES_*`
    /// (database `postly_images`), `KAFKA_BROKERS` (for session revocations).
    public var service: ServiceConfiguration
    /// `PEXELS_API_KEY`: sent upstream as the bare `Authorization` value; none configured
    /// answers from the cache or 503. Never logged, never answered.
    public var apiKey: Secret?
    /// `PEXELS_BASE_URL` (default `https://api.pexels.com`), without a trailing slash.
    public var upstreamURL: String
    /// `PEXELS_TIMEOUT_MS` (default 3000): how long one upstream call may take in all.
    public var upstreamTimeout: Duration
    /// `PEXELS_HOURLY_LIMIT` (200) and `PEXELS_MONTHLY_LIMIT` (20,000): calls per sliding hour and
    /// per month (the calendar month in UTC, or the period `X-Ratelimit-Reset` announces).
    public var hourlyLimit: Int
    public var monthlyLimit: Int
    /// `IMAGES_USER_HOURLY_MISSES` (30): upstream calls one user may cause per sliding hour.
    public var userHourlyMisses: Int
    /// `IMAGES_CACHE_TTL_SECONDS` (21,600 = 6 h): how long an answer is fresh.
    public var cacheTTL: Duration
    /// `IMAGES_CACHE_MAX_ENTRIES` (10,000) and `IMAGES_CACHE_MAX_BYTES` (64 MiB): the cache's bounds.
    public var cacheMaxEntries: Int
    public var cacheMaxBytes: Int

    public init(environment: Environment = Environment()) {
        let positive = 1...Int.max
        service = ServiceConfiguration(name: "images", defaultPort: 8085, environment: environment)
        apiKey = environment.string("PEXELS_API_KEY").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.flatMap { $0.isEmpty ? nil : Secret($0) }
        var upstreamURL = environment.string("PEXELS_BASE_URL", default: "https://api.pexels.com")
        while upstreamURL.hasSuffix("/") { upstreamURL.removeLast() }
        self.upstreamURL = upstreamURL
        upstreamTimeout = environment.milliseconds("PEXELS_TIMEOUT_MS", default: 3000, minimum: 50)
        hourlyLimit = environment.integer("PEXELS_HOURLY_LIMIT", default: 200, in: positive)
        monthlyLimit = environment.integer("PEXELS_MONTHLY_LIMIT", default: 20_000, in: positive)
        userHourlyMisses = environment.integer("IMAGES_USER_HOURLY_MISSES", default: 30, in: positive)
        cacheTTL = .seconds(environment.integer("IMAGES_CACHE_TTL_SECONDS", default: 21_600, in: positive))
        cacheMaxEntries = environment.integer("IMAGES_CACHE_MAX_ENTRIES", default: 10_000, in: positive)
        cacheMaxBytes = environment.integer("IMAGES_CACHE_MAX_BYTES", default: 64 << 20, in: positive)
    }
}
