import ImagesService
import Logging
import PostlyService

let configuration = ImagesConfiguration()
PostlyMetrics.bootstrap(service: "images", logLevel: configuration.service.logLevel)
let app = try await buildApplication(configuration, logger: Logger(label: "postly.images"))
try await app.runService()
