import Foundation
import PostlyService

/// The posts service's environment, read in one place.
public struct PostsConfiguration: Sendable {
    /// `HOST`, `PORT` (default 8082), `POSTGRES_*` (database `postly_posts`), `KAFKA_BROKERS`, `AUTH_*`, `LOG_LEVEL`.
    public var service: ServiceConfiguration
    /// `POSTS_VIEW_FLUSH_INTERVAL_MS`: how often counted views are written (default 1000).
    public var viewFlushInterval: Duration
    /// `POSTS_CACHE_MIB`: about how much post text the read model holds at most (default 32);
    /// the least recently read posts go first.
    public var cacheBytes: Int
    /// `SCHEDULER_POLL_MS`: how long the scheduler sleeps at most between looks for due posts
    /// (default 1000); other instances' newly scheduled posts are seen within it.
    public var schedulerPoll: Duration
    /// `CHANGES_TOMBSTONE_DAYS`: how long the change feed keeps tombstones of deleted posts and
    /// comments (default 30); a cursor older than the last one purged answers 410.
    public var tombstoneRetention: TimeInterval
    /// The RSS and Atom feeds' site: `PUBLIC_BASE_URL` (default `http://127.0.0.1:8080`, the
    /// local gateway), `SITE_TITLE` (`Postly`), `SITE_DESCRIPTION`, `POST_URL_TEMPLATE`
    /// (`{base}/posts/{slug}`, the web client's route; `{id}` too), `FEED_TAG_DATE`
    /// (`2026-01-01`, the date of the entries' tag URIs: never change it).
    public var feedSite: FeedSite

    public init(environment: Environment = Environment()) {
        service = ServiceConfiguration(name: "posts", defaultPort: 8082, environment: environment)
        viewFlushInterval = environment.milliseconds("POSTS_VIEW_FLUSH_INTERVAL_MS", default: 1000, minimum: 10)
        cacheBytes = environment.integer("POSTS_CACHE_MIB", default: 32, in: 1...4096) << 20
        schedulerPoll = environment.milliseconds("SCHEDULER_POLL_MS", default: 1000, minimum: 10)
        tombstoneRetention = TimeInterval(environment.integer("CHANGES_TOMBSTONE_DAYS", default: 30, in: 1...3650) * 86_400)
        feedSite = FeedSite(
            permalink: Permalink(environment: environment), title: environment.string("SITE_TITLE", default: "Postly"),
            description: environment.string("SITE_DESCRIPTION", default: "The latest posts on Postly"),
            tagDate: environment.string("FEED_TAG_DATE", default: "2026-01-01"))
    }
}
