import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import Synchronization
import TestSupport

/// A stand-in for Pexels on 127.0.0.1: answers `/v1/search` and `/v1/curated` in Pexels'
/// shape, records every call, and answers as `behavior` says (an error status, slowly,
/// with or without `X-Ratelimit-*`, or echoing the key it was sent).
final class FakePexels: Sendable {
    struct Call: Sendable {
        var path: String
        /// The query string as it arrived, still percent-encoded.
        var rawQuery: String
        var authorization: String?
    }

    struct Behavior: Sendable {
        var status = 200
        var delay: Duration?
        /// `X-Ratelimit-Limit/Remaining/Reset` on successful answers, as Pexels sends them.
        var rateLimit: (limit: Int, remaining: Int, reset: Date)?
        /// Puts the `Authorization` it got into the body and a header.
        var echoKey = false
    }

    let calls = Mutex<[Call]>([])
    let behavior = Mutex(Behavior())

    var callCount: Int { calls.withLock { $0.count } }

    func answer(_ change: (inout Behavior) -> Void) {
        behavior.withLock { change(&$0) }
    }

    /// Runs the server for the duration of `body`, which gets its base URL.
    func run<T: Sendable>(_ body: @Sendable (String) async throws -> T) async throws -> T {
        let router = Router()
        router.get("v1/search") { request, _ in try await self.respond(request, kind: "search") }
        router.get("v1/curated") { request, _ in try await self.respond(request, kind: "curated") }
        return try await withLoopbackServer(router) { baseURL in try await body(baseURL) }
    }

    private func respond(_ request: Request, kind: String) async throws -> Response {
        let authorization = request.headers[.authorization]
        calls.withLock { $0.append(Call(path: request.uri.path, rawQuery: request.uri.query ?? "", authorization: authorization)) }
        let behavior = behavior.withLock { $0 }
        if let delay = behavior.delay { try await Task.sleep(for: delay) }
        let echoed = behavior.echoKey ? authorization ?? "" : nil
        var headers: HTTPFields = [.contentType: "application/json"]
        if let echoed { headers[HTTPField.Name("X-Echo")!] = echoed }
        guard behavior.status == 200 else {
            let text = #"{"error": "failed for key \#(echoed ?? "")"}"#
            return Response(status: .init(code: behavior.status), headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
        }
        if let rateLimit = behavior.rateLimit {
            headers[HTTPField.Name("X-Ratelimit-Limit")!] = String(rateLimit.limit)
            headers[HTTPField.Name("X-Ratelimit-Remaining")!] = String(rateLimit.remaining)
            headers[HTTPField.Name("X-Ratelimit-Reset")!] = String(Int(rateLimit.reset.timeIntervalSince1970))
        }
        let parameters = request.uri.queryParameters
        let page = Self.page(
            kind: kind, query: parameters.get("query"), perPage: parameters.get("per_page").flatMap { Int($0) } ?? 15,
            page: parameters.get("page").flatMap { Int($0) } ?? 1, echoed: echoed)
        let data = try JSONSerialization.data(withJSONObject: page, options: [.sortedKeys, .withoutEscapingSlashes])
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// A page as Pexels answers it, with one key Pexels might add and the service drops.
    static func page(kind: String, query: String?, perPage: Int, page: Int, echoed: String? = nil) -> [String: Any] {
        let photos: [[String: Any]] = (0..<perPage).map { index in
            let id = page * 1000 + index
            let base = "https://images.pexels.com/photos/\(id)/pexels-photo-\(id).jpeg"
            return [
                "id": id, "width": 4000, "height": 3000, "url": "https://www.pexels.com/photo/\(id)/",
                "photographer": "Photographer \(index)", "photographer_url": "https://www.pexels.com/@p\(index)",
                "photographer_id": 500 + index, "avg_color": "#7E8C8D", "liked": false,
                "alt": echoed.map { "echo \($0)" } ?? "\(query ?? "curated") \(index)",
                "src": [
                    "original": base, "large2x": base + "?h=650&dpr=2", "large": base + "?h=650", "medium": base + "?h=350",
                    "small": base + "?h=130", "portrait": base + "?h=1200&w=800", "landscape": base + "?h=627&w=1200",
                    "tiny": base + "?h=200&w=280",
                ],
            ]
        }
        var answer: [String: Any] = [
            "page": page, "per_page": perPage, "total_results": 8000, "photos": photos,
            "next_page": "https://api.pexels.com/v1/\(kind)/?page=\(page + 1)&per_page=\(perPage)"
                + (query.map { "&query=\($0.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")" } ?? "")
                + (echoed.map { "&key=\($0)" } ?? ""),
        ]
        if let echoed { answer["debug"] = "authorization was \(echoed)" }
        return answer
    }
}
