import AuthService
import Hummingbird
import Logging
import PostlyService

let configuration = AuthConfiguration()
PostlyMetrics.bootstrap(service: "auth", logLevel: configuration.service.logLevel)
let app = try await buildApplication(configuration, logger: Logger(label: "postly.auth"))
try await app.runService()
