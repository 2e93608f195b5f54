import Logging
import PostlyEvents
import ServiceLifecycle

/// Deletes the login failures that have left the window, once a window (a minute by
/// default): without it, the digests of a spray of emails would stay until the next sign-in.
struct LoginFailurePurge: Service {
    let limiter: LoginRateLimiter
    let logger: Logger

    func run() async throws {
        while !Task.isShuttingDownGracefully, !Task.isCancelled {
            await sleepUnlessShuttingDown(for: limiter.limits.window)
            do {
                try await limiter.purgeExpired()
            } catch {
                logger.warning("cannot purge the expired login failures", metadata: ["error": "\(error)"])
            }
        }
    }
}
