import Foundation
import Logging
import PostlyService
import SearchService

let configuration = SearchConfiguration()
PostlyMetrics.bootstrap(service: "search", logLevel: configuration.service.logLevel)
let logger = Logger(label: "postly.search")

switch CommandLine.arguments.dropFirst().first {
case "reindex":
    let report = try await reindex(configuration, logger: logger)
    logger.info("rebuilt the index", metadata: ["events": "\(report.events)", "duration": "\(report.duration)"])
case nil, "serve":
    let app = try await buildApplication(configuration, logger: logger)
    try await app.runService()
case let other?:
    print("usage: postly-search [serve | reindex]  (unknown command '\(other)')")
    exit(64)
}
