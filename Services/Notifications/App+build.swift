import Hummingbird
import Logging
import PostlyEvents
import PostlyKafka
import PostlyModels
import PostlyPostgres
import PostlyService

/// Builds the notifications service: the only place that constructs its dependencies.
///
/// - Parameter fetchJWKS: replaces fetching the auth service's keys (tests hand over a test key set).
public func buildApplication(
    _ configuration: NotificationsConfiguration, logger: Logger, fetchJWKS: AccessTokenVerifier.JWKSSource? = nil
) async throws -> some ApplicationProtocol {
    try await buildApplicationAndHub(configuration, logger: logger, fetchJWKS: fetchJWKS).app
}

/// The application and its hub of open streams (tests look at the hub).
func buildApplicationAndHub(
    _ configuration: NotificationsConfiguration, logger: Logger, fetchJWKS: AccessTokenVerifier.JWKSSource?
) async throws -> (app: some ApplicationProtocol, hub: NotificationHub) {
    let kafka = configuration.service.kafka
    let database = Database(configuration: configuration.service.postgres, logger: logger)
    let producer = try KafkaProducer(configuration: kafka, logger: logger)
    let scaffold = ServiceScaffold(name: "notifications", configuration: configuration.service, logger: logger, fetchJWKS: fetchJWKS)
    try await scaffold.prepare(database: database, migrations: schema)
    let repository = PostgresNotificationRepository(database: database)
    let hub = NotificationHub(
        database: database, repository: repository, heartbeatInterval: configuration.heartbeatInterval,
        streamCapacity: configuration.streamCapacity, logger: logger)
    scaffold.denyList.onRevocation { hub.endSession($0) }

    let router = scaffold.makeRouter(openAPIDocument: openAPIDocument, readinessChecks: [.database(database), .broker(kafka)])
    NotificationsController(repository: repository, ticketLifetime: configuration.ticketLifetime).addRoutes(to: router)
    NotificationStreamController(repository: repository, hub: hub, denyList: scaffold.denyList).addRoutes(to: router)

    let app = Application(
        router: router, configuration: scaffold.applicationConfiguration,
        services: scaffold.services + [
            database, producer, hub,
            EventConsumerRunner(
                name: "notifications", topics: [.posts, .comments, .users], database: database, kafka: kafka,
                deadLetters: producer, handler: NotificationsEventHandler(), logger: logger),
        ],
        logger: logger)
    return (app, hub)
}
