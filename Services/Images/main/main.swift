import ImagesService
import PostlyService

let configuration = ImagesConfiguration()
let logger = PostlyMetrics.bootstrap(configuration.service)
try await buildApplication(configuration, logger: logger).runService()
