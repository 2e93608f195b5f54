import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import Synchronization
import TestSupport

/// A Hummingbird app on 127.0.0.1, on a port the system picks, with the routes the client
/// tests call. It runs for the duration of `body`.
struct TestServer: Sendable {
    let baseURL: String
    /// Set when the `/drip` route could no longer write: the client closed the connection.
    let dripAborted: DripAbortSignal

    static func run<T>(_ body: (TestServer) async throws -> T) async throws -> T {
        let dripAborted = DripAbortSignal()
        return try await withLoopbackServer(router(dripAborted: dripAborted)) { baseURL in
            try await body(TestServer(baseURL: baseURL, dripAborted: dripAborted))
        }
    }


    /// The server is stopped by cancellation, which it reports at error level on every run.
    static func router(dripAborted: DripAbortSignal) -> Router<BasicRequestContext> {
        let router = Router()

        // Answers with the request's body, its method in `X-Method`, each `X-...` header as
        // `X-Echo-...`, and its Content-Type and User-Agent.
        for method in [HTTPRequest.Method.get, .post, .put, .delete, .patch] {
            router.on("echo", method: method) { request, _ -> Response in
                var request = request
                let body = try await request.collectBody(upTo: 16 * 1024 * 1024)
                var headers = HTTPFields()
                headers.append(HTTPField(name: HTTPField.Name("X-Method")!, value: request.method.rawValue))
                for field in request.headers where field.name.canonicalName.hasPrefix("x-") {
                    headers.append(HTTPField(name: HTTPField.Name("X-Echo-" + field.name.canonicalName.dropFirst(2))!, value: field.value))
                }
                headers.append(HTTPField(name: HTTPField.Name("X-Request-Content-Type")!, value: request.headers[.contentType] ?? "none"))
                headers.append(HTTPField(name: HTTPField.Name("X-Request-User-Agent")!, value: request.headers[.userAgent] ?? "none"))
                headers.append(HTTPField(name: HTTPField.Name("X-Request-Body-Length")!, value: String(body.readableBytes)))
                return Response(status: .ok, headers: headers, body: .init(byteBuffer: body))
            }
        }

        router.get("repeated") { _, _ -> Response in
            var headers = HTTPFields()
            headers.append(HTTPField(name: .setCookie, value: "first=1"))
            headers.append(HTTPField(name: .setCookie, value: "second=2"))
            return Response(status: .created, headers: headers, body: .init(byteBuffer: ByteBuffer(string: "two cookies")))
        }

        router.get("status/:code") { _, context -> Response in
            let code = try context.parameters.require("code", as: Int.self)
            return Response(status: .init(code: code))
        }

        router.get("redirect") { _, _ -> Response in
            Response(status: .found, headers: [.location: "/echo"])
        }

        // `count` bytes with a Content-Length.
        router.get("bytes/:count") { _, context -> Response in
            let count = try context.parameters.require("count", as: Int.self)
            return Response(status: .ok, body: .init(byteBuffer: ByteBuffer(bytes: pattern(count: count))))
        }

        // `count` bytes in chunks, without a Content-Length.
        router.get("stream/:count") { _, context -> Response in
            let count = try context.parameters.require("count", as: Int.self)
            return Response(status: .ok, body: ResponseBody { writer in
                let bytes = pattern(count: count)
                for start in stride(from: 0, to: count, by: 16 * 1024) {
                    try await writer.write(ByteBuffer(bytes: bytes[start..<min(start + 16 * 1024, count)]))
                }
                try await writer.finish(nil)
            })
        }

        // `code` with a body that never ends, until the client closes the connection.
        router.get("endless/:code") { _, context -> Response in
            let code = try context.parameters.require("code", as: Int.self)
            return Response(status: .init(code: code), body: ResponseBody { writer in
                let chunk = ByteBuffer(bytes: pattern(count: 16 * 1024))
                while true { try await writer.write(chunk) }
            })
        }

        router.get("sleep/:milliseconds") { _, context -> String in
            let milliseconds = try context.parameters.require("milliseconds", as: Int.self)
            try await Task.sleep(for: .milliseconds(milliseconds))
            return "slept"
        }

        // One byte every 20 ms for 10 s, noting when the client has gone away.
        router.get("drip") { _, _ -> Response in
            Response(status: .ok, body: ResponseBody { writer in
                do {
                    for _ in 0..<500 {
                        try await writer.write(ByteBuffer(string: "."))
                        try await Task.sleep(for: .milliseconds(20))
                    }
                    try await writer.finish(nil)
                } catch {
                    dripAborted.signal()
                    throw error
                }
            })
        }
        return router
    }
}

/// Bytes that are not all alike, so a reordering would show.
func pattern(count: Int) -> [UInt8] {
    (0..<count).map { UInt8(truncatingIfNeeded: $0 % 251) }
}

final class DripAbortSignal: Sendable {
    private let abortedAt = Mutex<ContinuousClock.Instant?>(nil)

    func signal() {
        abortedAt.withLock { $0 = $0 ?? .now }
    }

    /// When the route noticed the client was gone, waiting up to `limit` for it.
    func wait(upTo limit: Duration) async throws -> ContinuousClock.Instant? {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if let instant = abortedAt.withLock({ $0 }) { return instant }
            try await Task.sleep(for: .milliseconds(10))
        }
        return nil
    }
}
