import Foundation
import PostlyService

/// The images service's environment, read here and nowhere else.
public struct ImagesConfiguration: Sendable {
    /// `HOST`, `PORT` (default 8085), `LOG_LEVEL`, `AUTH_JWKS_URL`, `AUTH_ISSUER`, `KAFKA_BROKERS`
    /// (for session revocations). The `POSTGRES_*` variables are read but unused: no database.
    public var service: ServiceConfiguration
    /// `PEXELS_API_KEY`: sent upstream as the bare `Authorization` value; none configured
    /// answers from the cache or 503. Never logged, never answered.
    public var apiKey: String?
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

    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        func value(_ key: String) -> String? { environment[key].flatMap { $0.isEmpty ? nil : $0 } }
        func positive(_ key: String, _ fallback: Int) -> Int { value(key).flatMap { Int($0) }.flatMap { $0 > 0 ? $0 : nil } ?? fallback }
        service = ServiceConfiguration(name: "images", defaultPort: 8085, environment: environment)
        apiKey = value("PEXELS_API_KEY")?.trimmingCharacters(in: .whitespacesAndNewlines)
        if apiKey?.isEmpty == true { apiKey = nil }
        var upstreamURL = value("PEXELS_BASE_URL") ?? "https://api.pexels.com"
        while upstreamURL.hasSuffix("/") { upstreamURL.removeLast() }
        self.upstreamURL = upstreamURL
        upstreamTimeout = .milliseconds(max(50, positive("PEXELS_TIMEOUT_MS", 3000)))
        hourlyLimit = positive("PEXELS_HOURLY_LIMIT", 200)
        monthlyLimit = positive("PEXELS_MONTHLY_LIMIT", 20_000)
        userHourlyMisses = positive("IMAGES_USER_HOURLY_MISSES", 30)
        cacheTTL = .seconds(positive("IMAGES_CACHE_TTL_SECONDS", 21_600))
        cacheMaxEntries = positive("IMAGES_CACHE_MAX_ENTRIES", 10_000)
        cacheMaxBytes = positive("IMAGES_CACHE_MAX_BYTES", 64 << 20)
    }
}
