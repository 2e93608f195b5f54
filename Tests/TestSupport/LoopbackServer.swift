import Hummingbird
import Logging

/// Runs `router` on 127.0.0.1, on a port the kernel picks, while `body` runs, and hands
/// `body` its base URL (`http://127.0.0.1:PORT`): a real HTTP peer for tests, such as an
/// upstream service or an OpenID issuer.
public func withLoopbackServer<T>(_ router: Router<BasicRequestContext>, _ body: (String) async throws -> T) async throws -> T {
    // Stopping the server by cancellation is logged as an error: keep it quiet.
    var logger = Logger(label: "loopback-server")
    logger.logLevel = .critical
    let (ports, portContinuation) = AsyncStream<Int>.makeStream()
    let app = Application(
        router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
        onServerRunning: { channel in
            portContinuation.yield(channel.localAddress?.port ?? 0)
            portContinuation.finish()
        },
        logger: logger)
    return try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await app.runService(gracefulShutdownSignals: []) }
        defer { group.cancelAll() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next(), port != 0 else { throw LoopbackServerDidNotStart() }
        return try await body("http://127.0.0.1:\(port)")
    }
}

public struct LoopbackServerDidNotStart: Error {}
