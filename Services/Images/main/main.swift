import ImagesService
import PostlyService

runTasksOnEventLoops()

let configuration = ImagesConfiguration()
let logger = try PostlyMetrics.bootstrap(configuration.service)
try await buildApplication(configuration, logger: logger).runService()
