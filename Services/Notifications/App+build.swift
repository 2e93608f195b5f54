import Hummingbird
import Logging
import PostlyService

/// Builds the notifications service: the only place that constructs its dependencies.
public func buildApplication(_ configuration: NotificationsConfiguration, logger: Logger, options: ServiceKit.Options = .init()) throws -> some ApplicationProtocol {
    try buildApplicationAndHub(configuration, logger: logger, options: options).app
}

/// The application and its hub of open streams (tests look at the hub).
func buildApplicationAndHub(
    _ configuration: NotificationsConfiguration, logger: Logger, options: ServiceKit.Options
) throws -> (app: some ApplicationProtocol, hub: NotificationHub) {
    let kit = try ServiceKit(configuration.service, schema: schema, logger: logger, options: options)
    let repository = PostgresNotificationRepository(database: kit.database)
    let openStreams = OpenStreams(
        database: kit.database, streamsPerUser: configuration.streamsPerUser, staleAfter: configuration.heartbeatInterval * 3)
    let hub = NotificationHub(
        database: kit.database, repository: repository, openStreams: openStreams, denyList: kit.denyList,
        heartbeatInterval: configuration.heartbeatInterval, streamCapacity: configuration.streamCapacity, logger: logger)
    let app = kit.application(
        router: buildRouter(kit, configuration, repository: repository, hub: hub),
        consumers: [kit.consumer(of: [.posts, .comments, .users], handler: NotificationsEventHandler())],
        services: [hub])
    return (app, hub)
}

/// The notifications routes on the kit's middleware. Builds without touching the database; not
/// ready until the hub has listened for stored notifications.
func buildRouter(
    _ kit: ServiceKit, _ configuration: NotificationsConfiguration, repository: any NotificationRepository, hub: NotificationHub
) -> Router<PostlyRequestContext> {
    let listening = ReadinessCheck(name: "listening") {
        guard hub.hasListened else { throw NotificationHub.NotListened() }
    }
    let router = kit.makeRouter(openAPI: openAPI, readinessChecks: [listening])
    NotificationsController(repository: repository, ticketLifetime: configuration.ticketLifetime).addRoutes(to: router)
    NotificationStreamController(repository: repository, hub: hub, denyList: kit.denyList).addRoutes(to: router)
    return router
}
