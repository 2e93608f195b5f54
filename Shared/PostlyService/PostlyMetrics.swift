import Logging
import Metrics
import Prometheus

/// Process-wide logging and metrics. `bootstrap` is called once, in a service's `main`.
public enum PostlyMetrics {
    public static let registry = PrometheusCollectorRegistry()

    public static func bootstrap(service: String, logLevel: Logger.Level) {
        LoggingSystem.bootstrap { label in
            var handler = JSONLogHandler(label: label, level: logLevel)
            handler.metadata["service"] = .string(service)
            return handler
        }
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
    }
}
