import Foundation
import Logging
import PostlyService
import PostsService

runTasksOnEventLoops()

let configuration = PostsConfiguration()
let logger = try PostlyMetrics.bootstrap(configuration.service)

switch CommandLine.arguments.dropFirst().first {
case "republish":
    let count = try await republishPosts(configuration, logger: logger)
    logger.info("republished every post", metadata: ["posts": "\(count)"])
case "rerender":
    let count = try await rerenderPosts(configuration, logger: logger)
    logger.info("rendered every post again", metadata: ["changed": "\(count)"])
case nil, "serve":
    try await buildApplication(configuration, logger: logger).runService()
case let other?:
    print("usage: postly-posts [serve | republish | rerender]  (unknown command '\(other)')")
    exit(64)
}
