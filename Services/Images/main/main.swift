import ImagesService
import PostlyService

let configuration = ImagesConfiguration()
let logger = try PostlyMetrics.bootstrap(configuration.service)
try await buildApplication(configuration, logger: logger).runService()
