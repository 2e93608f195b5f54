import Metrics

/// What `/metrics` shows of the cache and the upstream. Labels are fixed words and status
/// codes, never anything the upstream or a client sent.
struct ImagesMetrics: Sendable {
    let factory: any MetricsFactory
    let hits: Counter
    let misses: Counter
    let coalescedWaits: Counter
    let staleAnswers: Counter
    let userLimited: Counter
    let upstreamLatency: Timer
    let budgetLeftThisHour: Gauge
    let budgetLeftThisMonth: Gauge
    let cacheEntries: Gauge
    let cacheBytes: Gauge

    /// - Parameter factory: the process's metrics system unless a test hands over its own.
    init(factory: any MetricsFactory = MetricsSystem.factory) {
        self.factory = factory
        hits = Counter(label: "images_cache_hits_total", factory: factory)
        misses = Counter(label: "images_cache_misses_total", factory: factory)
        coalescedWaits = Counter(label: "images_coalesced_waits_total", factory: factory)
        staleAnswers = Counter(label: "images_stale_answers_total", factory: factory)
        userLimited = Counter(label: "images_user_limited_total", factory: factory)
        upstreamLatency = Timer(label: "images_upstream_latency_seconds", factory: factory)
        budgetLeftThisHour = Gauge(label: "images_upstream_budget_remaining", dimensions: [("window", "hour")], factory: factory)
        budgetLeftThisMonth = Gauge(label: "images_upstream_budget_remaining", dimensions: [("window", "month")], factory: factory)
        cacheEntries = Gauge(label: "images_cache_entries", factory: factory)
        cacheBytes = Gauge(label: "images_cache_bytes", factory: factory)
    }

    /// One upstream call that ended with `status`: an HTTP status code, `timeout`,
    /// `unreachable` or `malformed`.
    func upstreamCall(_ status: String) {
        Counter(label: "images_upstream_calls_total", dimensions: [("status", status)], factory: factory).increment()
    }

    func record(_ remaining: UpstreamBudget.Remaining) {
        budgetLeftThisHour.record(remaining.hour)
        budgetLeftThisMonth.record(remaining.month)
    }

    func record(_ usage: ResponseCache.Usage) {
        cacheEntries.record(usage.entries)
        cacheBytes.record(usage.bytes)
    }
}
