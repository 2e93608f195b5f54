import FederationService
import PostlyService

runTasksOnEventLoops()

let configuration = FederationConfiguration()
let logger = try PostlyMetrics.bootstrap(configuration.service)
try await buildApplication(configuration, logger: logger).runService()
