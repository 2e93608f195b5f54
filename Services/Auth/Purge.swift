import Logging
import PostlyEvents
import ServiceLifecycle

/// Deletes, every `interval`, what no request can use any more: the login failures that left
/// their window (else the digests of a spray of emails would stay until the next sign-in),
/// and spent or expired refresh tokens and dead sessions (every refresh adds a row).
struct Purge: Service {
    let interval: Duration
    /// What is purged, for the log.
    let what: String
    let logger: Logger
    let purge: @Sendable () async throws -> Void

    func run() async throws {
        while !Task.isShuttingDownGracefully, !Task.isCancelled {
            await sleepUnlessShuttingDown(for: interval)
            do {
                try await purge()
            } catch {
                logger.warning("cannot purge \(what)", metadata: ["error": "\(error)"])
            }
        }
    }
}
