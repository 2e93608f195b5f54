import Foundation
import PostlyService

/// The federation service's environment, read here and nowhere else.
public struct FederationConfiguration: Sendable {
    /// `HOST`, `PORT` (default 8087), `LOG_LEVEL`, `AUTH_JWKS_URL`, `AUTH_ISSUER`, `POSTGRES_*`
    /// (database `postly_federation`), `KAFKA_BROKERS`.
    public var service: ServiceConfiguration
    /// `PUBLIC_BASE_URL` and `POST_URL_TEMPLATE`: where an `Article`'s `url` says its post is read,
    /// as the feeds say. The base URL is the address the fediverse reaches us at: every
    /// ActivityPub id is made from it, and its host (with its port) is the host of `acct:` handles.
    public var permalink: Permalink
    /// `FEDERATION_ALLOW_PRIVATE_NETWORKS` (default off; `1` for tests on loopback): outbound
    /// fetches and deliveries may go to loopback and private addresses.
    public var allowPrivateNetworks: Bool
    /// `FEDERATION_RETRY_BASE_MS` (default 60000): the first retry's delay; the later ones keep
    /// Mastodon's proportions (1 m, 5 m, 30 m, 2 h, 6 h, 12 h, 24 h, 24 h at the default).
    public var retryBase: Duration
    /// `FEDERATION_HOST_PAUSE_MS` (default 600000): how long a host that failed
    /// `hostFailureLimit` deliveries in a row is left alone.
    public var hostPause: Duration
    /// A host failing this many deliveries in a row is paused.
    public var hostFailureLimit = 10
    /// `FEDERATION_POLL_MS` (default 1000): how often the delivery worker looks for due
    /// retries and for deliveries another instance enqueued.
    public var pollInterval: Duration
    /// `FEDERATION_DELIVERY_CONCURRENCY` (default 64): deliveries one instance sends at once.
    public var deliveryConcurrency: Int
    /// How long a delivery or a key fetch may take.
    public var requestTimeout: Duration = .seconds(10)
    /// How long the key fetches of one signature check may take together: under the 30 s a
    /// Mastodon sender waits for an answer, and the gateway's 60 s.
    public var keyFetchTime: Duration = .seconds(20)
    /// How long a fetched remote key is trusted before it is fetched again.
    public var keyCacheLifetime: TimeInterval = 24 * 3600
    /// How far in the past (12 h, Mastodon's window) and the future (1 h of clock skew) a
    /// signed request's `Date` may be.
    public var signatureWindow: ClosedRange<TimeInterval> = -12 * 3600...3600

    public init(environment: Environment = Environment()) {
        service = ServiceConfiguration(name: "federation", defaultPort: 8087, environment: environment)
        permalink = Permalink(environment: environment)
        allowPrivateNetworks = environment.string("FEDERATION_ALLOW_PRIVATE_NETWORKS") == "1"
        retryBase = environment.milliseconds("FEDERATION_RETRY_BASE_MS", default: 60_000, minimum: 1)
        hostPause = environment.milliseconds("FEDERATION_HOST_PAUSE_MS", default: 600_000, minimum: 1)
        pollInterval = environment.milliseconds("FEDERATION_POLL_MS", default: 1000, minimum: 10)
        deliveryConcurrency = environment.integer("FEDERATION_DELIVERY_CONCURRENCY", default: 64, in: 1...1000)
    }
}
