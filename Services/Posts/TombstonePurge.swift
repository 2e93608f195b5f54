import Foundation
import Logging
import PostlyEvents
import ServiceLifecycle

/// Purges the change feed's tombstones older than `retention` every hour, on the write unit's
/// clock; a cursor from before the last one purged then answers 410 (the client resyncs).
struct TombstonePurge: Service {
    let feed: ChangeFeed
    let writes: WriteUnit
    let retention: TimeInterval
    let logger: Logger

    func run() async throws {
        while !Task.isShuttingDownGracefully, !Task.isCancelled {
            do {
                try await feed.purgeTombstones(before: writes.now.addingTimeInterval(-retention))
            } catch {
                logger.warning("cannot purge the change feed's tombstones", metadata: ["error": "\(error)"])
            }
            await sleepUnlessShuttingDown(for: .seconds(3600))
        }
    }
}
