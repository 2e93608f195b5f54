import Foundation
import Hummingbird
import Logging
import PostlyCurl
import PostlyEvents
import PostlyKafka
import PostlyModels
import PostlyPostgres
import ServiceLifecycle

/// What every service is made of, made the same way from its configuration: its database, its
/// Kafka producer, the write unit, the outbox relay (for a service that publishes), its
/// consumer groups, and the scaffold every service shares (token verification with the
/// deny-list, the middleware chain, the operations routes, readiness). A service's
/// `App+build.swift` makes one, builds its router on it (`buildRouter(kit, ...)`, which touches
/// no database), and hands both back as an application (`application(router:...)`).
///
/// Start-up work (the migrations, the topics, what the service adds) runs in the
/// application's `beforeServerStarts`, inside the lifecycle; the relay, the consumers and the
/// service's own long-running parts start after it, so none of them meets a missing table.
public struct ServiceKit: Sendable {
    /// What tests replace.
    public struct Options: Sendable {
        /// Replaces fetching the auth service's keys (tests hand over a test key set).
        public var fetchJWKS: AccessTokenVerifier.JWKSSource?
        /// The write unit's clock, which ages `Idempotency-Key`s (tests move it).
        public var clock: WriteUnit.Clock

        public init(fetchJWKS: AccessTokenVerifier.JWKSSource? = nil, clock: @escaping WriteUnit.Clock = { Date() }) {
            self.fetchJWKS = fetchJWKS
            self.clock = clock
        }
    }

    public let configuration: ServiceConfiguration
    public let logger: Logger
    public let database: Database
    public let producer: KafkaProducer
    /// The one way the service writes a change; only for a service that publishes events.
    public let writes: WriteUnit
    public let httpClient: CurlHTTPClient
    public let denyList: SessionDenyList
    public let verifier: AccessTokenVerifier
    /// The revoked sessions heard of, kept in the service's database and loaded at start.
    let revokedSessions: RevokedSessions
    public let readiness = ReadinessMonitor()
    /// The service's migrations and the kit's own (`RevokedSessions`).
    let schema: Migrations
    let publishesEvents: Bool
    let started = StartupGate()

    public var name: String { configuration.name }

    /// - Parameters:
    ///   - schema: the service's migrations, applied at start with the kit's own (versions from
    ///     `RevokedSessions.firstKitVersion` up).
    ///   - publishesEvents: runs the outbox relay and the write unit's purge.
    public init(
        _ configuration: ServiceConfiguration, schema: Migrations, publishesEvents: Bool = false, logger: Logger,
        options: Options = Options()
    ) throws {
        self.configuration = configuration
        self.logger = logger
        self.schema = Migrations(schema.migrations + [RevokedSessions.migration])
        self.publishesEvents = publishesEvents
        database = Database(configuration: configuration.postgres, logger: logger)
        revokedSessions = RevokedSessions(database: database)
        producer = try KafkaProducer(configuration: configuration.kafka, logger: logger)
        writes = WriteUnit(database: database, producer: configuration.name, clock: options.clock, logger: logger)
        let httpClient = CurlHTTPClient(logger: logger)
        self.httpClient = httpClient
        denyList = SessionDenyList()
        let jwksURL = configuration.jwksURL
        verifier = AccessTokenVerifier(
            configuration: .init(issuer: configuration.issuer), denyList: denyList, logger: logger,
            fetchJWKS: options.fetchJWKS ?? {
                let response = try await httpClient.execute(.get(jwksURL))
                guard response.status == 200 else { throw APIError.unavailable("The auth service's keys are unavailable") }
                return String(decoding: response.body, as: UTF8.self)
            })
    }

    /// A consumer group of this service, named after it unless `group` names another (a
    /// second group of the same service keeps its applied sequences apart).
    public func consumer(of topics: [Topic], group: String? = nil, handler: any EventHandler) -> EventConsumerRunner {
        EventConsumerRunner(
            name: group ?? name, topics: topics, database: database, kafka: configuration.kafka, deadLetters: producer,
            handler: handler, logger: logger)
    }

    /// A router with the middleware chain every service has (request id, problem documents,
    /// metrics, a deadline for the database's waits, authentication) and the operations
    /// routes. Routes that need a caller go on `authenticated(router)`. `readinessNotes` are
    /// shown by a ready `/health/ready`, which also waits for the service's own
    /// `readinessChecks` besides the database and the broker.
    public func makeRouter(
        openAPI: OpenAPIDocument, readinessChecks: [ReadinessCheck] = [], readinessNotes: @escaping @Sendable () -> [String] = { [] }
    ) -> Router<PostlyRequestContext> {
        let router = Router(context: PostlyRequestContext.self)
        // The request's span (its trace continued from `traceparent`), around everything else;
        // only when traces are exported: the no-op tracer's span still costs about a microsecond
        // (bench/Sources/tracing-off-bench), a few per cent of a read from memory.
        if configuration.tracesEndpoint != nil {
            router.add(middleware: TracingMiddleware(redactingQueryParameters: ["ticket", "lastEventId"]))
        }
        router.add(middleware: RequestIDMiddleware())
        router.add(middleware: ProblemMiddleware())
        router.add(middleware: MetricsMiddleware())
        router.add(middleware: RequestDeadlineMiddleware())
        router.add(middleware: ImportGate(token: configuration.importToken))
        router.add(middleware: AuthenticationMiddleware(verifier: verifier))
        readiness.check([.database(database), .broker(configuration.kafka), .tokenKeys(verifier)] + readinessChecks)
        OperationsRoutes(openAPIDocument: openAPI.json, readiness: readiness, readinessNotes: readinessNotes, metrics: PostlyMetrics.registry)
            .add(to: router)
        return router
    }

    /// The service as an application: the kit's parts, then the token verifier, the revocation
    /// listener, `services`, the relay and `consumers`, started once `startup` (after the
    /// migrations, the topics and loading the revoked sessions) has run.
    /// Shutdown runs in reverse: the HTTP server, the consumers and relay, `services`, then
    /// the producer and the database. `router` is complete: its paths get their 405s here.
    public func application(
        router: Router<PostlyRequestContext>, consumers: [EventConsumerRunner] = [], services: [any Service] = [],
        startup: @escaping @Sendable () async throws -> Void = {}
    ) -> some ApplicationProtocol {
        router.answerMethodNotAllowed()
        let relay: [any Service] = publishesEvents ? [writes, OutboxRelay(database: database, publisher: producer, logger: logger)] : []
        // The verifier too: the auth service's own keys exist once its start-up made them; and the
        // revocation listener, which stores into a table the migrations make.
        let listener = SessionRevocationListener(
            kafka: configuration.kafka, serviceName: name, denyList: denyList, store: revokedSessions, logger: logger)
        let afterStartup = ([verifier, listener] + services + relay + consumers).map {
            AfterStartup(service: $0, started: started) as any Service
        }
        var application = Application(
            router: router,
            configuration: ApplicationConfiguration(
                address: .hostname(configuration.host, port: configuration.port), serverName: "postly-\(name)"),
            // The trace exporter first, so it stops last, after every span ended.
            services: PostlyMetrics.tracingServices + [httpClient, readiness, database, producer] + afterStartup,
            logger: logger)
        application.beforeServerStarts {
            try await prepare()
            // Sessions revoked before the restart stay refused, whatever the broker still holds.
            try await revokedSessions.load(into: denyList)
            try await startup()
            started.open()
        }
        return application
    }

    /// The tables (a database that cannot be reached fails the start) and the topics (a
    /// broker that is down only delays events: they wait in the outbox).
    func prepare() async throws {
        try await schema.apply(to: database)
        do {
            try await KafkaTopics.create(Topic.allCases.map(\.rawValue), configuration: configuration.kafka, timeout: .seconds(5), logger: logger)
        } catch {
            logger.warning("could not create the topics; the broker may be down", metadata: ["error": "\(error)"])
        }
    }
}
