import Foundation
import Logging
import PostlyService
import SearchService

runTasksOnEventLoops()

let configuration = SearchConfiguration()
let logger = try PostlyMetrics.bootstrap(configuration.service)

switch CommandLine.arguments.dropFirst().first {
case "reindex":
    let report = try await reindex(configuration, logger: logger)
    logger.info("rebuilt the index", metadata: ["events": "\(report.events)", "duration": "\(report.duration)"])
case nil, "serve":
    try await buildApplication(configuration, logger: logger).runService()
case let other?:
    print("usage: postly-search [serve | reindex]  (unknown command '\(other)')")
    exit(64)
}
