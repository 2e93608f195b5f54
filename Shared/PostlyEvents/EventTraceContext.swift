import Instrumentation
import PostlyModels
import ServiceContextModule

/// The W3C trace context an event carries (`traceparent`), taken from the task that emits it
/// and given to the work that applies it, so one trace runs from a request through its events'
/// consumers. Nothing when nothing is traced (no tracer is bootstrapped).
enum EventTraceContext {
    /// The current trace as a `traceparent`, nil outside a trace.
    static var current: String? {
        guard let context = ServiceContext.current else { return nil }
        var carrier: [String: String] = [:]
        InstrumentationSystem.instrument.inject(context, into: &carrier, using: DictionaryCarrier())
        return carrier[key]
    }

    /// The service context that continues the trace `event` carries.
    static func context(of event: Event) -> ServiceContext {
        var context = ServiceContext.topLevel
        if let traceparent = event.traceparent {
            InstrumentationSystem.instrument.extract([key: traceparent], into: &context, using: DictionaryCarrier())
        }
        return context
    }

    private static let key = "traceparent"
}

private struct DictionaryCarrier: Injector, Extractor {
    func inject(_ value: String, forKey key: String, into carrier: inout [String: String]) {
        carrier[key] = value
    }

    func extract(key: String, from carrier: [String: String]) -> String? {
        carrier[key]
    }
}
