import Hummingbird
import Logging
import PostlyService

/// Builds the auth service: the only place that constructs its dependencies.
public func buildApplication(_ configuration: AuthConfiguration, logger: Logger) throws -> some ApplicationProtocol {
    let kit = try ServiceKit(configuration.service, schema: schema, publishesEvents: true, logger: logger)
    let signer = AccessTokenSigner(
        repository: PostgresSigningKeyRepository(database: kit.database), issuer: configuration.service.issuer,
        lifetime: configuration.accessTokenLifetime)
    // This service verifies its own tokens like every other one, with its own key set.
    kit.verifier.useKeys(from: signer.jwks)
    let limiter = LoginRateLimiter(limits: configuration.loginLimits, writes: kit.writes)
    let accounts = PostgresAccountRepository(database: kit.database)
    let purges = [
        Purge(interval: configuration.loginLimits.window, what: "the expired login failures", logger: kit.logger) {
            try await limiter.purgeExpired()
        },
        Purge(interval: .seconds(3600), what: "the expired sessions", logger: kit.logger) {
            try await accounts.purgeExpiredSessions(replayGrace: configuration.refreshReplayGrace)
        },
    ]
    return kit.application(router: buildRouter(kit, configuration, signer: signer), services: purges, startup: signer.load)
}

/// The auth routes on the kit's middleware. Builds without touching the database.
func buildRouter(_ kit: ServiceKit, _ configuration: AuthConfiguration, signer: AccessTokenSigner) -> Router<PostlyRequestContext> {
    let router = kit.makeRouter(openAPI: openAPI)
    let accounts = PostgresAccountRepository(database: kit.database)
    AuthController(
        accounts: accounts,
        writes: kit.writes,
        signer: signer,
        passwords: PasswordHasher(cost: configuration.bcryptCost, concurrent: configuration.hashesAtOnce, waiting: configuration.hashesWaiting),
        rateLimiter: LoginRateLimiter(limits: configuration.loginLimits, writes: kit.writes),
        google: GoogleIDTokenVerifier(configuration: configuration.google, httpClient: kit.httpClient, logger: kit.logger),
        denyList: kit.denyList,
        accessTokenLifetime: configuration.accessTokenLifetime,
        refreshTokenLifetime: configuration.refreshTokenLifetime,
        refreshReplayGrace: configuration.refreshReplayGrace
    ).addRoutes(to: router)
    UsersImportController(accounts: accounts, writes: kit.writes).addRoutes(to: kit.importRoutes(on: router))
    return router
}
