import Instrumentation
import Logging
import Metrics
import OTel
import Prometheus
import ServiceLifecycle
import Synchronization

/// Process-wide logging, metrics and tracing. `bootstrap` is called once, in a service's `main`.
public enum PostlyMetrics {
    public static let registry = PrometheusCollectorRegistry()

    /// What exports traces, when they are exported: the kit runs it with the service.
    static var tracingServices: [any Service] { tracing.withLock { $0 } }
    private static let tracing = Mutex<[any Service]>([])

    /// Sets up logging and metrics for `service`, and tracing when `service.tracesEndpoint` is
    /// set (spans over OTLP/HTTP, and each log line inside a span with its trace and span ids);
    /// returns the service's logger. Without an endpoint nothing traces: the spans in the code
    /// are the no-op tracer's.
    public static func bootstrap(_ service: ServiceConfiguration) throws -> Logger {
        let name = service.name
        let logLevel = service.logLevel
        var metadataProvider: Logger.MetadataProvider?
        if service.tracesEndpoint != nil {
            var configuration = OTel.Configuration.default
            configuration.serviceName = "postly-\(name)"
            configuration.logs.enabled = false
            configuration.metrics.enabled = false
            let backend = try OTel.makeTracingBackend(configuration: configuration)
            InstrumentationSystem.bootstrap(backend.factory)
            tracing.withLock { $0 = [backend.service] }
            metadataProvider = OTel.makeLoggingMetadataProvider()
        }
        LoggingSystem.bootstrap({ label, provider in
            var handler = JSONLogHandler(label: label, level: logLevel)
            handler.metadata["service"] = .string(name)
            handler.metadataProvider = provider
            return handler
        }, metadataProvider: metadataProvider)
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        return Logger(label: "postly.\(name)")
    }
}
