import Hummingbird
import Logging
import PostlyService

/// Builds the search service: the only place that constructs its dependencies.
public func buildApplication(_ configuration: SearchConfiguration, logger: Logger, options: ServiceKit.Options = .init()) throws -> some ApplicationProtocol {
    let kit = try ServiceKit(configuration.service, schema: schema, logger: logger, options: options)
    let lexicon = Lexicon()
    return kit.application(
        router: buildRouter(kit, lexicon: lexicon),
        consumers: [kit.consumer(of: [.posts, .users, .comments], handler: SearchIndexer())],
        services: [LexiconRefresher(lexicon: lexicon, database: kit.database, logger: logger)])
}

/// The search route on the kit's middleware. Builds without touching the database.
func buildRouter(_ kit: ServiceKit, lexicon: Lexicon) -> Router<PostlyRequestContext> {
    let router = kit.makeRouter(openAPI: openAPI)
    SearchController(repository: PostgresSearchRepository(database: kit.database, lexicon: lexicon)).addRoutes(to: router)
    return router
}
