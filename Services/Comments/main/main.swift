import CommentsService
import Logging
import PostlyService

let configuration = CommentsConfiguration()
PostlyMetrics.bootstrap(service: "comments", logLevel: configuration.service.logLevel)
let app = try await buildApplication(configuration, logger: Logger(label: "postly.comments"))
try await app.runService()
