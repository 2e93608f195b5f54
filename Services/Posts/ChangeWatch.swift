import Logging
import PostlyEvents
import ServiceLifecycle

/// Wakes the change feed's long polls (`ChangesController`). This instance's commits ring
/// its bell at once. Other instances' commits never do, and a change becomes readable only
/// when every older transaction has ended too, so the watch also looks at the log's frontier
/// (`ChangeFeed.now()`) every `pollInterval` and rings when it moved: one look for all the
/// instance's waiting requests, where each looked for itself before (a thousand idle long
/// polls took two thousand transactions a second).
struct ChangeWatch: Service {
    static let pollInterval = Duration.milliseconds(500)

    let feed: ChangeFeed
    let bell: CommitBell
    let logger: Logger

    init(feed: ChangeFeed, logger: Logger) {
        self.feed = feed
        self.bell = CommitBell(database: feed.database, channel: ChangeLog.channel) { _ in true }
        self.logger = logger
    }

    func run() async throws {
        var seen: ChangeCursor?
        var failing = false
        while !Task.isShuttingDownGracefully, !Task.isCancelled {
            do {
                let frontier = try await feed.now()
                if let seen, seen != frontier { bell.ring() }
                seen = frontier
                failing = false
            } catch {
                // Said once, not twice a second; the waiters still answer at their deadline.
                if !failing { logger.warning("cannot look at the change feed's frontier", metadata: ["error": "\(error)"]) }
                failing = true
            }
            await sleepUnlessShuttingDown(for: Self.pollInterval)
        }
    }
}
