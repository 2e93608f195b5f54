import Foundation
import Logging
import PostlyService
import PostsService

let configuration = PostsConfiguration()
PostlyMetrics.bootstrap(service: "posts", logLevel: configuration.service.logLevel)
let logger = Logger(label: "postly.posts")

switch CommandLine.arguments.dropFirst().first {
case "republish":
    let count = try await republishPosts(configuration, logger: logger)
    logger.info("republished every post", metadata: ["posts": "\(count)"])
case "rerender":
    let count = try await rerenderPosts(configuration, logger: logger)
    logger.info("rendered every post again", metadata: ["changed": "\(count)"])
case nil, "serve":
    let app = try await buildApplication(configuration, logger: logger)
    try await app.runService()
case let other?:
    print("usage: postly-posts [serve | republish | rerender]  (unknown command '\(other)')")
    exit(64)
}
