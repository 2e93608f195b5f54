import Hummingbird
import PostlyPostgres

/// Gives each request `budget` for its waits on the database (`Database.deadline`). Alone,
/// each statement's timeouts (10 s for a pooled connection, 35 s for the server's answer) add
/// up, on a frozen server, past the gateway's 60 s for a request that runs two: the gateway
/// answered 504 while the request held its connection on. Now it answers 503 in time. The
/// import routes, which the gateway never sees, keep the statements' own timeouts: the
/// importer waits 120 s for a batch.
public struct RequestDeadlineMiddleware: RouterMiddleware {
    public typealias Context = PostlyRequestContext

    /// Under the gateway's `proxy_read_timeout` (60 s) by what may follow the deadline: a
    /// COMMIT cut there is settled on a connection of its own (`LostCommit`, up to about 10 s).
    public static let budget = Duration.seconds(40)

    public init() {}

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard !ImportGate.isInternal(request.uri.path) else { return try await next(request, context) }
        return try await Database.$deadline.withValue(.now + Self.budget) {
            try await next(request, context)
        }
    }
}
