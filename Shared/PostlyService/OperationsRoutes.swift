import Foundation
import Hummingbird
import Prometheus

/// `/health/live`, `/health/ready`, `/health/serving`, `/metrics` and `/openapi.json` of every
/// service. Not under `/api`: the gateway does not route them.
struct OperationsRoutes {
    let openAPIDocument: String
    let readiness: ReadinessMonitor
    /// What a ready service still wants to say (such as a missing optional setting).
    let readinessNotes: @Sendable () -> [String]
    let metrics: PrometheusCollectorRegistry

    func add(to router: Router<PostlyRequestContext>) {
        router.get("health/live") { _, _ in HealthStatus(status: "ok", failing: nil) }
        router.get("health/ready") { _, _ in try ready() }
        router.get("health/serving") { _, _ in try serving() }
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

    /// 200 when every dependency answered the monitor's last round of checks, else 503 naming
    /// the ones that did not. Never waits for a check.
    func ready() throws -> HealthStatus {
        guard let failing = readiness.lastFailing else {
            throw APIError.unavailable("Not ready: starting", retryAfterSeconds: 1)
        }
        guard failing.isEmpty else {
            throw APIError.unavailable("Not ready: \(failing.joined(separator: ", ")) unreachable", retryAfterSeconds: 2)
        }
        let notes = readinessNotes()
        return HealthStatus(status: "ok", failing: nil, notes: notes.isEmpty ? nil : notes)
    }
}

extension OperationsRoutes {
    /// 200 when every dependency but the broker answered the monitor's last round (the
    /// database, the auth service's keys, a service's own such as search's index): what an
    /// orchestrator's readiness probe asks. With the broker down, writes still succeed into the
    /// outbox, so taking every instance out of service would turn an outage of events into an
    /// outage of everything.
    func serving() throws -> HealthStatus {
        guard let failing = readiness.lastFailing else {
            throw APIError.unavailable("Not serving: starting", retryAfterSeconds: 1)
        }
        let missing = failing.filter { $0 != ReadinessCheck.brokerName }
        guard missing.isEmpty else {
            throw APIError.unavailable("Not serving: \(missing.joined(separator: ", ")) unreachable", retryAfterSeconds: 2)
        }
        return HealthStatus(status: "ok", failing: nil)
    }
}

struct HealthStatus: ResponseEncodable {
    var status: String
    var failing: [String]?
    var notes: [String]? = nil
}
