import Hummingbird
import Logging
import PostlyEvents
import PostlyKafka
import PostlyModels
import PostlyPostgres
import PostlyService

/// Builds the auth service: the only place that constructs its dependencies.
public func buildApplication(_ configuration: AuthConfiguration, logger: Logger) async throws -> some ApplicationProtocol {
    let kafka = configuration.service.kafka
    let database = Database(configuration: configuration.service.postgres, logger: logger)
    let producer = try KafkaProducer(configuration: kafka, logger: logger)
    let writes = WriteUnit(database: database, producer: "auth", logger: logger)
    let signer = AccessTokenSigner(
        repository: PostgresSigningKeyRepository(database: database), issuer: configuration.service.issuer,
        lifetime: configuration.accessTokenLifetime)
    // This service verifies its own tokens like every other one, with its own key set.
    let scaffold = ServiceScaffold(
        name: "auth", configuration: configuration.service, logger: logger, fetchJWKS: { try await signer.jwks() })
    try await scaffold.prepare(database: database, migrations: Migrations(schema))
    try await signer.load()
    let router = scaffold.makeRouter(openAPIDocument: openAPIDocument, readinessChecks: [.database(database), .broker(kafka)])
    AuthController(
        accounts: PostgresAccountRepository(database: database),
        writes: writes,
        signer: signer,
        passwords: PasswordHasher(cost: configuration.bcryptCost),
        rateLimiter: LoginRateLimiter(limits: configuration.loginLimits),
        google: GoogleIDTokenVerifier(configuration: configuration.google, httpClient: scaffold.httpClient, logger: logger),
        denyList: scaffold.denyList,
        accessTokenLifetime: configuration.accessTokenLifetime,
        refreshTokenLifetime: configuration.refreshTokenLifetime
    ).addRoutes(to: router)

    return Application(
        router: router, configuration: scaffold.applicationConfiguration,
        services: scaffold.services + [database, producer, writes, OutboxRelay(database: database, publisher: producer, logger: logger)],
        logger: logger)
}
