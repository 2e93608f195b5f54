import NotificationsService
import PostlyService

let configuration = NotificationsConfiguration()
let logger = try PostlyMetrics.bootstrap(configuration.service)
try await buildApplication(configuration, logger: logger).runService()
