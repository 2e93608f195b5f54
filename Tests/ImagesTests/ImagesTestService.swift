import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import PostlyModels
import PostlyService
import Prometheus
import TestSupport

@testable import ImagesService

/// The images service built as `main` builds it (the shared `ServiceTestHarness`), against
/// a fake Pexels, with its own metrics registry and every log line captured.
struct ImagesTestService: Sendable {
    static let apiKey = "pexels-test-key-563492ad6f91700001000001"

    let harness: ServiceTestHarness
    /// Every log line the service wrote, at any level, with its metadata.
    let logs: Locked<[String]>
    let metrics: PrometheusCollectorRegistry
    /// Another instance of the service on the same database, clock and Pexels.
    let anotherInstance: @Sendable () throws -> any ApplicationProtocol
    /// The clock of the cache's freshness and the budget's windows.
    var clock: TestClock { harness.clock }

    /// Runs the application for `body`. `environment` adds to (or, with empty values,
    /// removes from) the test's: the fake's URL, the key, a 500 ms upstream timeout.
    static func run(
        pexels: FakePexels, environment: [String: String] = [:],
        _ body: @Sendable @escaping (ImagesTestService, any TestClientProtocol) async throws -> Void
    ) async throws {
        try await pexels.run { baseURL in
            let variables = ["PEXELS_BASE_URL": baseURL, "PEXELS_API_KEY": apiKey, "PEXELS_TIMEOUT_MS": "500"]
                .merging(environment) { $1 }
            let logs = Locked<[String]>([])
            let metrics = PrometheusCollectorRegistry()
            let firstSetup = Locked<ServiceTestHarness.Setup?>(nil)
            @Sendable func instance(_ setup: ServiceTestHarness.Setup) throws -> some ApplicationProtocol {
                var configuration = ImagesConfiguration(environment: Environment(variables))
                configuration.service.postgres = setup.postgres
                configuration.service.kafka = setup.kafka
                var logger = Logger(label: "postly.images.tests") { _ in CapturingLogHandler(lines: logs) }
                logger.logLevel = .trace
                return try buildApplication(
                    configuration, logger: logger, options: setup.options, clock: setup.clock.now,
                    metricsFactory: PrometheusMetricsFactory(registry: metrics))
            }
            try await ServiceTestHarness.run { setup in
                firstSetup.withLock { $0 = setup }
                return try instance(setup)
            } _: { harness in
                let service = ImagesTestService(harness: harness, logs: logs, metrics: metrics) {
                    try instance(firstSetup.value!)
                }
                try await body(service, harness.client)
            }
        }
    }

    func token() async throws -> String {
        try await harness.user().token
    }

    var logText: String { logs.value.joined(separator: "\n") }

    /// The value of the metric line that starts with `name` (with its labels), if any.
    func metric(_ name: String) -> Double? {
        metrics.emitToString().split(separator: "\n")
            .first { $0.hasPrefix(name + " ") }
            .flatMap { Double($0.split(separator: " ").last ?? "") }
    }
}

struct CapturingLogHandler: LogHandler {
    let lines: Locked<[String]>
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let metadata = self.metadata.merging(event.metadata ?? [:]) { $1 }
        lines.withLock { $0.append("\(event.level) \(event.message) \(metadata)") }
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
