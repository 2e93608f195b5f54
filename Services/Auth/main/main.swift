import AuthService
import PostlyService

let configuration = AuthConfiguration()
let logger = PostlyMetrics.bootstrap(configuration.service)
try await buildApplication(configuration, logger: logger).runService()
