import AuthService
import PostlyService

runTasksOnEventLoops()

let configuration = AuthConfiguration()
let logger = try PostlyMetrics.bootstrap(configuration.service)
try await buildApplication(configuration, logger: logger).runService()
