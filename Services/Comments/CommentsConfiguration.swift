import Foundation
import PostlyService

/// The comments service's environment, read here and nowhere else.
public struct CommentsConfiguration: Sendable {
    /// `HOST`, `PORT` (default 8083), `LOG_LEVEL`, `AUTH_JWKS_URL`, `POSTGRES_*` (database
    /// `postly_comments`), `KAFKA_BROKERS`.
    public var service: ServiceConfiguration
    /// `POSTS_URL`: the posts service, asked about a post the projection does not know yet.
    public var postsURL: String
    /// `POSTS_TIMEOUT_MS` (default 1000): how long that question may take in all.
    public var postsTimeout: Duration
    /// `IMPORT_POST_WAIT_MS` (default 10000): how long `POST /internal/import/comments` waits for
    /// the events of posts it does not know yet before it rejects their comments.
    public var importPostWait: Duration

    public init(environment: Environment = Environment()) {
        service = ServiceConfiguration(name: "comments", defaultPort: 8083, environment: environment)
        var postsURL = environment.string("POSTS_URL", default: "http://127.0.0.1:8082")
        while postsURL.hasSuffix("/") { postsURL.removeLast() }
        self.postsURL = postsURL
        postsTimeout = environment.milliseconds("POSTS_TIMEOUT_MS", default: 1000, minimum: 50)
        importPostWait = environment.milliseconds("IMPORT_POST_WAIT_MS", default: 10_000)
    }
}
