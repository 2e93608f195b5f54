import Foundation
import Logging
import PostlyService
import SearchService

runTasksOnEventLoops()

let configuration = SearchConfiguration()
let logger = try PostlyMetrics.bootstrap(configuration.service)

switch CommandLine.arguments.dropFirst().first {
case "reindex":
    do {
        let report = try await reindex(configuration, logger: logger, acceptingLosses: CommandLine.arguments.contains("--accept-losses"))
        logger.info("rebuilt the index", metadata: ["events": "\(report.events)", "duration": "\(report.duration)"])
    } catch let refusal as ReindexRefusal {
        logger.error("reindex refused: \(refusal)")
        exit(1)
    } catch {
        logger.error("reindex failed: \(error)")
        exit(1)
    }
case nil, "serve":
    try await buildApplication(configuration, logger: logger).runService()
case let other?:
    print("usage: postly-search [serve | reindex [--accept-losses]]  (unknown command '\(other)')")
    exit(64)
}
