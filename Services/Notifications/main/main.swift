import Logging
import NotificationsService
import PostlyService

let configuration = NotificationsConfiguration()
PostlyMetrics.bootstrap(service: "notifications", logLevel: configuration.service.logLevel)
let app = try await buildApplication(configuration, logger: Logger(label: "postly.notifications"))
try await app.runService()
