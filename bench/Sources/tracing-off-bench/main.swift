import Tracing

// The cost of the spans in the services' code when tracing is off (no OTLP endpoint, so no
// tracer is bootstrapped and every span is the no-op tracer's): a statement's span as
// `DatabaseConnection` makes it, against the same call without one. A request through a
// service makes one request span (Hummingbird's TracingMiddleware) and one per statement.

@inline(never) func statement(_ x: Int) async -> Int { x &+ 1 }

@inline(never) func spanned(_ x: Int, _ text: String) async -> Int {
    await withSpan("db.query", ofKind: .client) { span in
        span.attributes["db.system.name"] = "postgresql"
        span.attributes["db.query.text"] = text
        return await statement(x)
    }
}

@inline(never) nonisolated func measure() async {
    let calls = 1_000_000
    let text = "SELECT id, title FROM posts WHERE id = $1"
    var sink = 0
    for round in 1...3 {
        var start = ContinuousClock.now
        for i in 0..<calls { sink &+= await statement(i) }
        let plain = (ContinuousClock.now - start) / calls
        start = ContinuousClock.now
        for i in 0..<calls { sink &+= await spanned(i, text) }
        let withSpan = (ContinuousClock.now - start) / calls
        print("round \(round): a call \(plain), the same in a no-op span \(withSpan): the span costs \(withSpan - plain)")
    }
    if sink == 42 { print(sink) }
}

await measure()
