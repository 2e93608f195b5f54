import CommentsService
import PostlyService

runTasksOnEventLoops()

let configuration = CommentsConfiguration()
let logger = try PostlyMetrics.bootstrap(configuration.service)
try await buildApplication(configuration, logger: logger).runService()
