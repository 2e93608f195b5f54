import Logging
import PostlyEvents
import ServiceLifecycle

/// Watches the change log's frontier (`ChangeFeed.now()`) every `pollInterval`, and when it
/// moved:
/// - wakes the change feed's long polls (`ChangesController`). This instance's commits ring
///   its bell at once. Other instances' commits never do, and a change becomes readable only
///   when every older transaction has ended too. One look serves all the instance's waiting
///   requests (a thousand idle long polls, each looking for itself, took two thousand
///   transactions a second);
/// - tells the read model what the log says changed since the last look. Other instances'
///   changes come as notifications within milliseconds (`ReadModelSync`), but an instance
///   killed between a commit and its notification never sends it, and other instances served
///   what it changed (a post unpublished since, say) until the next change of it. Views and
///   likes, which the log does not hold, are left to the drop-everything of its replacement.
struct ChangeWatch: Service {
    static let pollInterval = Duration.milliseconds(500)
    /// More changes than this at one look drop the whole read model instead.
    static let readModelLimit = 1_000

    let feed: ChangeFeed
    let model: ReadModel
    let bell: CommitBell
    let logger: Logger

    init(feed: ChangeFeed, model: ReadModel, logger: Logger) {
        self.feed = feed
        self.model = model
        self.bell = CommitBell(database: feed.database, channel: ChangeLog.channel) { _ in true }
        self.logger = logger
    }

    func run() async throws {
        var seen: ChangeCursor?
        var failing = false
        while !Task.isShuttingDownGracefully, !Task.isCancelled {
            do {
                let frontier = try await feed.now()
                if let seen, seen != frontier {
                    bell.ring()
                    try await tellReadModel(after: seen, upTo: frontier)
                }
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

    /// The changes between two looks, this instance's own among them (dropped a second time:
    /// a read misses once more).
    private func tellReadModel(after seen: ChangeCursor, upTo frontier: ChangeCursor) async throws {
        let rows = try await feed.rows(after: seen, upTo: frontier, limit: Self.readModelLimit + 1)
        if rows.count > Self.readModelLimit { return model.apply(.everything) }
        for change in Set(rows.flatMap(PostChange.logged)) { model.apply(change) }
    }
}
