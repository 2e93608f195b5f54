import Foundation
import HTTPTypes
import Hummingbird
import PostlyService
import ServiceLifecycle

extension ChangePage: ResponseEncodable {}

extension ChangeFeedError: APIErrorConvertible {
    public var apiError: APIError {
        switch self {
        case .expired: APIError(.gone, code: "cursor_expired", detail: "Resync: call without since")
        }
    }
}

/// `GET /api/changes`: what changed since a cursor, for a client that was offline. JWT
/// optional: a reader sees its own drafts and scheduled posts too, and one whose token is
/// refused (expired, revoked) gets the refusal.
struct ChangesController: Sendable {
    let feed: ChangeFeed
    /// Rings when a change may be there to read (`ChangeWatch`).
    let bell: CommitBell

    func addRoutes(to router: Router<PostlyRequestContext>) {
        router.get("api/changes", use: changes)
    }

    @Sendable func changes(_ request: Request, context: PostlyRequestContext) async throws -> Response {
        let query = request.uri.queryParameters
        var cursor: ChangeCursor?
        switch query.get("since") {
        case nil: cursor = nil
        case "now"?: cursor = try await feed.now()
        case let token?:
            guard let decoded = ChangeCursor(token: token) else {
                throw APIError(.badRequest, code: "invalid_cursor", detail: "since is not a cursor this server issued")
            }
            cursor = decoded
        }
        let limit = try Self.integer("limit", in: query, default: 100, 1...500)
        let wait = try Self.integer("wait", in: query, default: 0, 0...30)
        // A token that was refused is the answer, not a read as anyone: that page's cursor
        // would move past the caller's own drafts and scheduled posts for good.
        if let refusal = context.tokenRefusal { throw refusal }
        let viewer = context.identity?.userId

        var page: ChangePage
        if query.get("since") == "now" {
            page = ChangePage(changes: [], next: cursor?.token ?? "", more: false)
        } else {
            let deadline = ContinuousClock.now + .seconds(wait)
            while true {
                let rings = bell.rings
                page = try await feed.page(after: cursor, viewer: viewer, limit: limit)
                guard page.changes.isEmpty, ContinuousClock.now < deadline, !Task.isShuttingDownGracefully else { break }
                // Nothing new: wait for news, or the deadline; a shutdown answers at once.
                cursor = ChangeCursor(token: page.next)
                await cancelWhenGracefulShutdown {
                    await bell.wait(after: rings, atMost: ContinuousClock.now.duration(to: deadline))
                }
            }
        }
        return try EditedResponse(headers: [.cacheControl: "no-store"], response: page).response(from: request, context: context)
    }

    /// A whole number in `range`, else 400 `invalid_query`.
    static func integer(_ name: String, in query: Parameters, default value: Int, _ range: ClosedRange<Int>) throws -> Int {
        guard let text = query.get(name) else { return value }
        guard let number = Int(text), range.contains(number) else {
            throw APIError(.badRequest, code: "invalid_query", detail: "'\(name)' must be an integer from \(range.lowerBound) to \(range.upperBound)")
        }
        return number
    }
}
