import Foundation
import Hummingbird
import Logging
import PostlyService

/// Builds the federation service: the only place that constructs its dependencies.
public func buildApplication(_ configuration: FederationConfiguration, logger: Logger, options: ServiceKit.Options = .init()) throws -> some ApplicationProtocol {
    let kit = try ServiceKit(configuration.service, schema: schema, logger: logger, options: options)
    let parts = FederationParts(kit, configuration)
    return kit.application(
        router: buildRouter(kit, parts),
        consumers: [kit.consumer(of: [.posts, .users], handler: FederationEventHandler(documents: parts.documents, keys: parts.keys))],
        services: [
            DeliveryWorker(queue: parts.queue, http: parts.http, keys: parts.keys, urls: parts.urls, configuration: configuration, logger: logger)
        ])
}

/// The federation routes on the kit's middleware. Builds without touching the database.
func buildRouter(_ kit: ServiceKit, _ parts: FederationParts) -> Router<PostlyRequestContext> {
    let router = kit.makeRouter(openAPI: openAPI)
    DiscoveryController(urls: parts.urls, actors: parts.actors, articles: parts.articles).addRoutes(to: router)
    ActorController(documents: parts.documents, actors: parts.actors, keys: parts.keys, articles: parts.articles, followers: parts.followers)
        .addRoutes(to: router)
    ObjectController(documents: parts.documents, articles: parts.articles).addRoutes(to: router)
    InboxController(verifier: parts.verifier, processor: parts.processor, actors: parts.actors).addRoutes(to: router)
    return router
}

/// The service's parts, made once from the kit and the configuration.
struct FederationParts: Sendable {
    let urls: FederationURLs
    let documents: ActivityDocuments
    let actors: ActorRepository
    let articles: ArticleRepository
    let followers: FollowerRepository
    let keys: ActorKeys
    let http: OutboundHTTP
    let queue: DeliveryQueue
    let verifier: SignatureVerifier
    let processor: InboxProcessor

    init(_ kit: ServiceKit, _ configuration: FederationConfiguration, clock: @escaping @Sendable () -> Date = { Date() }) {
        urls = FederationURLs(permalink: configuration.permalink)
        documents = ActivityDocuments(urls: urls)
        actors = ActorRepository(database: kit.database)
        articles = ArticleRepository(database: kit.database)
        followers = FollowerRepository(database: kit.database)
        keys = ActorKeys(database: kit.database)
        http = OutboundHTTP(client: kit.httpClient, allowPrivateNetworks: configuration.allowPrivateNetworks, timeout: configuration.requestTimeout)
        queue = DeliveryQueue(database: kit.database, clock: clock)
        let remoteActors = RemoteActors(
            database: kit.database, http: http, keys: keys, urls: urls, lifetime: configuration.keyCacheLifetime, budget: KeyFetchBudget(),
            logger: kit.logger)
        verifier = SignatureVerifier(
            actors: remoteActors, window: configuration.signatureWindow, keyFetchTime: configuration.keyFetchTime, clock: clock)
        processor = InboxProcessor(writes: kit.writes, documents: documents, actors: actors)
    }
}
