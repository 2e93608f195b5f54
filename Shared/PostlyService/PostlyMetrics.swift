import Logging
import Metrics
import Prometheus

/// Process-wide logging and metrics. `bootstrap` is called once, in a service's `main`.
public enum PostlyMetrics {
    public static let registry = PrometheusCollectorRegistry()

    /// Sets up logging and metrics for `service` and returns its logger.
    public static func bootstrap(_ service: ServiceConfiguration) -> Logger {
        let name = service.name
        let logLevel = service.logLevel
        LoggingSystem.bootstrap { label in
            var handler = JSONLogHandler(label: label, level: logLevel)
            handler.metadata["service"] = .string(name)
            return handler
        }
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        return Logger(label: "postly.\(name)")
    }
}
