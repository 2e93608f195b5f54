import NotificationsService
import PostlyService

runTasksOnEventLoops()

let configuration = NotificationsConfiguration()
let logger = try PostlyMetrics.bootstrap(configuration.service)
try await buildApplication(configuration, logger: logger).runService()
