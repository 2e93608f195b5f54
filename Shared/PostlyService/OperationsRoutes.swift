import Foundation
import Hummingbird
import Prometheus

/// `/health/live`, `/health/ready`, `/metrics` and `/openapi.json` of every service. Not
/// under `/api`: the gateway does not route them.
struct OperationsRoutes {
    let openAPIDocument: String
    let readinessChecks: [ReadinessCheck]
    /// What a ready service still wants to say (such as a missing optional setting).
    let readinessNotes: @Sendable () -> [String]
    let metrics: PrometheusCollectorRegistry

    func add(to router: Router<PostlyRequestContext>) {
        router.get("health/live") { _, _ in HealthStatus(status: "ok") }
        router.get("health/ready") { _, _ in try await ready() }
        router.get("metrics") { _, _ in
            var buffer = [UInt8]()
            metrics.emit(into: &buffer)
            return Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(bytes: buffer)))
        }
        router.get("openapi.json") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "application/json; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: openAPIDocument)))
        }
    }

    /// 200 when every dependency answers within `ReadinessCheck.timeout`, else 503 naming the
    /// ones that did not.
    func ready() async throws -> HealthStatus {
        let failing = await withTaskGroup(of: String?.self) { group in
            for check in readinessChecks {
                group.addTask {
                    do {
                        try await withTimeout(ReadinessCheck.timeout) { try await check.check() }
                        return nil
                    } catch {
                        return check.name
                    }
                }
            }
            var failing: [String] = []
            for await name in group { if let name { failing.append(name) } }
            return failing.sorted()
        }
        guard failing.isEmpty else {
            throw APIError.unavailable("Not ready: \(failing.joined(separator: ", ")) unreachable", retryAfterSeconds: 2)
        }
        let notes = readinessNotes()
        return HealthStatus(status: "ok", notes: notes.isEmpty ? nil : notes)
    }
}

struct HealthStatus: ResponseEncodable {
    var status: String
    var notes: [String]?
}

struct TimedOut: Error {}

/// Runs `body`, or throws `TimedOut` after `duration` (and cancels it).
func withTimeout<T: Sendable>(_ duration: Duration, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: duration)
            throw TimedOut()
        }
        defer { group.cancelAll() }
        return try await group.next()!
    }
}
