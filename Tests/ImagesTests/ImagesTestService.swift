import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import PostlyModels
import Prometheus
import Synchronization
import TestSupport

@testable import ImagesService

/// The images service built as `main` builds it, against a fake Pexels, with a test token
/// issuer, a clock the test moves, its own metrics registry, and every log line captured.
struct ImagesTestService: Sendable {
    static let apiKey = "pexels-test-key-563492ad6f91700001000001"

    let issuer: TestTokenIssuer
    let clock: TestClock
    let logs: LogCapture
    let metrics: PrometheusCollectorRegistry

    /// Runs the application for `body`. `environment` adds to (or, with empty values,
    /// removes from) the test's: the fake's URL, the key, a 500 ms upstream timeout.
    static func run(
        pexels: FakePexels, environment: [String: String] = [:],
        _ body: @Sendable @escaping (ImagesTestService, any TestClientProtocol) async throws -> Void
    ) async throws {
        try await pexels.run { baseURL in
            var variables = ["PEXELS_BASE_URL": baseURL, "PEXELS_API_KEY": apiKey, "PEXELS_TIMEOUT_MS": "500"]
            variables.merge(environment) { $1 }
            var configuration = ImagesConfiguration(environment: variables)
            configuration.service.kafka = try testConfiguration()
            let issuer = try await TestTokenIssuer()
            let jwks = issuer.jwks
            let service = ImagesTestService(issuer: issuer, clock: TestClock(), logs: LogCapture(), metrics: PrometheusCollectorRegistry())
            var logger = Logger(label: "postly.images.tests") { _ in CapturingLogHandler(capture: service.logs) }
            logger.logLevel = .trace
            let app = try await buildApplication(
                configuration, logger: logger, fetchJWKS: { jwks }, now: { service.clock.now },
                metricsFactory: PrometheusMetricsFactory(registry: service.metrics))
            try await app.test(.router) { client in try await body(service, client) }
        }
    }

    func token(userId: String = UUID().uuidString.lowercased()) async throws -> String {
        try await issuer.token(userId: userId)
    }

    /// The value of the metric line that starts with `name` (with its labels), if any.
    func metric(_ name: String) -> Double? {
        metrics.emitToString().split(separator: "\n")
            .first { $0.hasPrefix(name + " ") }
            .flatMap { Double($0.split(separator: " ").last ?? "") }
    }
}

/// The wall clock of the service under test, moved by the test.
final class TestClock: Sendable {
    /// Mid-month (2027-01-15T08:00:00Z), so no test crosses a month by accident.
    private let current = Mutex(Date(timeIntervalSince1970: 1_800_000_000))

    var now: Date { current.withLock { $0 } }

    func advance(by seconds: TimeInterval) {
        current.withLock { $0 += seconds }
    }
}

/// Every log line the service wrote, at any level, with its metadata.
final class LogCapture: Sendable {
    let lines = Mutex<[String]>([])

    var text: String { lines.withLock { $0.joined(separator: "\n") } }
}

struct CapturingLogHandler: LogHandler {
    let capture: LogCapture
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let metadata = self.metadata.merging(event.metadata ?? [:]) { $1 }
        capture.lines.withLock { $0.append("\(event.level) \(event.message) \(metadata)") }
    }
}

// MARK: - Requests

extension TestClientProtocol {
    func images(_ path: String, token: String?) async throws -> TestResponse {
        let headers: HTTPFields = token.map { [.authorization: "Bearer \($0)"] } ?? [:]
        return try await execute(uri: path, method: .get, headers: headers) { $0 }
    }

    func search(_ query: String, token: String?, extra: String = "") async throws -> TestResponse {
        let encoded = query.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? query
        return try await images("/api/images/search?query=\(encoded)\(extra)", token: token)
    }
}

extension TestResponse {
    var data: Data { body.withUnsafeReadableBytes { Data($0) } }
    var text: String { String(decoding: data, as: UTF8.self) }
    var problem: Problem? { try? PostlyJSON.decoder().decode(Problem.self, from: data) }
    var json: [String: Any]? { (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] }
    var isStale: Bool { headers[HTTPField.Name("Warning")!] == #"110 - "Response is Stale""# }
}
