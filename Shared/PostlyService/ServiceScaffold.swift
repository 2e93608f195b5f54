import Hummingbird
import Logging
import PostlyCurl
import PostlyKafka
import PostlyModels
import PostlyPostgres
import ServiceLifecycle

/// What every service is built on, the same way: the middleware chain, token verification
/// with the deny-list, the operations routes, and the long-running services that go with
/// them. A service's `App+build.swift` makes one, adds its own routes to `router`, and runs
/// `services` plus its own in one `Application`.
public struct ServiceScaffold: Sendable {
    public let name: String
    public let configuration: ServiceConfiguration
    public let logger: Logger
    public let httpClient: CurlHTTPClient
    public let denyList: SessionDenyList
    public let verifier: AccessTokenVerifier
    /// Keeps `/health/ready`'s answer; among `services`.
    public let readiness = ReadinessMonitor()

    /// Builds the scaffold. `fetchJWKS` replaces fetching `configuration.jwksURL` (the auth
    /// service hands over its own keys; tests hand over a test key set).
    public init(name: String, configuration: ServiceConfiguration, logger: Logger, fetchJWKS: AccessTokenVerifier.JWKSSource? = nil) {
        self.name = name
        self.configuration = configuration
        self.logger = logger
        let httpClient = CurlHTTPClient(logger: logger)
        self.httpClient = httpClient
        self.denyList = SessionDenyList()
        let jwksURL = configuration.jwksURL
        self.verifier = AccessTokenVerifier(
            configuration: .init(issuer: configuration.issuer), denyList: denyList, logger: logger,
            fetchJWKS: fetchJWKS ?? {
                let response = try await httpClient.execute(.get(jwksURL))
                guard response.status == 200 else { throw APIError.unavailable("The auth service's keys are unavailable") }
                return String(decoding: response.body, as: UTF8.self)
            })
    }

    /// Makes ready what the service's long-running parts need before any of them starts:
    /// its tables (the migrations, which fail the start when the database is unreachable)
    /// and the topics (a broker that is down only delays events: they wait in the outbox).
    public func prepare(database: Database, migrations: Migrations) async throws {
        try await migrations.apply(to: database)
        await prepareTopics()
    }

    /// Creates the topics that do not exist yet (all a service without a database prepares).
    public func prepareTopics() async {
        do {
            try await KafkaTopics.create(Topic.allCases.map(\.rawValue), configuration: configuration.kafka, timeout: .seconds(5), logger: logger)
        } catch {
            logger.warning("could not create the topics; the broker may be down", metadata: ["error": "\(error)"])
        }
    }

    /// A router with the middleware chain every service has (request id, problem documents,
    /// metrics, authentication) and the operations routes. `readinessNotes` are shown by a
    /// ready `/health/ready`.
    public func makeRouter(
        openAPIDocument: String, readinessChecks: [ReadinessCheck], readinessNotes: @escaping @Sendable () -> [String] = { [] }
    ) -> Router<PostlyRequestContext> {
        let router = Router(context: PostlyRequestContext.self)
        router.add(middleware: RequestIDMiddleware())
        router.add(middleware: ProblemMiddleware())
        router.add(middleware: MetricsMiddleware())
        router.add(middleware: AuthenticationMiddleware(verifier: verifier))
        readiness.check(readinessChecks)
        OperationsRoutes(openAPIDocument: openAPIDocument, readiness: readiness, readinessNotes: readinessNotes, metrics: PostlyMetrics.registry)
            .add(to: router)
        return router
    }

    /// The long-running parts of the scaffold, for the application's service group. The
    /// HTTP client comes first so it stops last, after everything that uses it.
    public var services: [any Service] {
        [
            httpClient,
            verifier,
            readiness,
            SessionRevocationListener(kafka: configuration.kafka, serviceName: name, denyList: denyList, logger: logger),
        ]
    }

    /// The HTTP server's configuration.
    public var applicationConfiguration: ApplicationConfiguration {
        ApplicationConfiguration(address: .hostname(configuration.host, port: configuration.port), serverName: "postly-\(name)")
    }
}
