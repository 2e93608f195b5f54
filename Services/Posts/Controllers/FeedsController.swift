import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import PostlyService

/// The RSS 2.0 and Atom feeds of the site and of each author: public, `HEAD` too, with
/// `ETag` and `Last-Modified` and their 304s (RFC 9110 §13.1.2-13.1.3). A rendered feed is
/// kept until the read model takes in a change a feed may show (`FeedCache`). `Last-Modified`
/// is sent once it is settled (`FeedContent.isSettled`), seconds after a write.
struct FeedsController: Sendable {
    let repository: any PostRepository
    let site: FeedSite
    let cache: FeedCache

    func addRoutes(to router: Router<PostlyRequestContext>) {
        for format in FeedFormat.allCases {
            for method in [HTTPRequest.Method.get, .head] {
                router.on("api/feeds/posts.\(format.rawValue)", method: method) { request, context in
                    try await feed(format, authorId: nil, request: request)
                }
                router.on("api/users/:userId/feed.\(format.rawValue)", method: method) { request, context in
                    try await feed(format, authorId: try context.parameters.require("userId"), request: request)
                }
            }
        }
    }

    func feed(_ format: FeedFormat, authorId: String?, request: Request) async throws -> Response {
        let key = FeedCache.Key(format: format, authorId: authorId)
        let feed = try await cache.feed(key) {
            let content = try await repository.feed(authorId: authorId, epoch: site.epoch)
            let path = authorId.map { "/api/users/\($0.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? $0)/feed" } ?? "/api/feeds/posts"
            return RenderedFeed(format: format, body: FeedRendering.render(format, content, site: site, selfURL: "\(site.baseURL)\(path).\(format.rawValue)"), lastModified: content.lastModified, isSettled: content.isSettled)
        }
        var headers: HTTPFields = [.eTag: feed.etag, .cacheControl: "public, max-age=300"]
        headers[.lastModified] = feed.lastModified
        if feed.isFresh(for: request.headers) { return Response(status: .notModified, headers: headers) }
        headers[.contentType] = format.contentType
        guard request.method != .head else {
            headers[.contentLength] = String(feed.body.count)
            return Response(status: .ok, headers: headers)
        }
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: feed.body)))
    }
}

/// A feed as rendered, with its validators.
struct RenderedFeed: Sendable {
    let body: [UInt8]
    /// Strong: base64url of the first 12 bytes of the body's SHA-256.
    let etag: String
    /// IMF-fixdate; nil while not settled.
    let lastModified: String?
    let lastModifiedSecond: Date
    var renderedAt = ContinuousClock.now

    init(format: FeedFormat, body: [UInt8], lastModified: Date, isSettled: Bool) {
        self.body = body
        let digest = Data(SHA256.hash(data: body).prefix(12)).base64EncodedString()
        etag = "\"" + digest.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_") + "\""
        self.lastModified = isSettled ? HTTPDate.format(lastModified) : nil
        lastModifiedSecond = Date(timeIntervalSince1970: lastModified.timeIntervalSince1970.rounded(.down))
    }

    /// Whether the client's copy is current: `If-None-Match` decides when sent (weak
    /// comparison, `*` matches), else `If-Modified-Since` at or after the feed's newest change,
    /// sent or not (an unparsable date is ignored). A date sent was settled: what the client
    /// lacks is stamped after it.
    func isFresh(for headers: HTTPFields) -> Bool {
        if let ifNoneMatch = headers[.ifNoneMatch] { return PostsController.matches(ifNoneMatch, etag: etag) }
        guard let text = headers[.ifModifiedSince], let since = HTTPDate.parse(text) else { return false }
        return since >= lastModifiedSecond
    }
}
