import Hummingbird
import Logging
import PostlyService

/// Builds the search service: the only place that constructs its dependencies.
public func buildApplication(_ configuration: SearchConfiguration, logger: Logger, options: ServiceKit.Options = .init()) throws -> some ApplicationProtocol {
    try buildApplication(configuration, index: SearchIndex(), logger: logger, options: options)
}

/// The service around `index` (tests look at it, to wait for it to catch up).
func buildApplication(
    _ configuration: SearchConfiguration, index: SearchIndex, logger: Logger, options: ServiceKit.Options = .init()
) throws -> some ApplicationProtocol {
    let kit = try ServiceKit(configuration.service, schema: schema, logger: logger, options: options)
    return kit.application(
        router: buildRouter(kit, index: index, contents: ContentCache(bytes: configuration.contentCacheBytes)),
        consumers: [kit.consumer(of: [.posts, .users, .comments], handler: SearchIndexer(index: index))],
        services: [IndexFollower(index: index, database: kit.database, logger: logger)])
}

/// The search route on the kit's middleware. Builds without touching the database; not ready
/// until the index is loaded.
func buildRouter(_ kit: ServiceKit, index: SearchIndex, contents: ContentCache) -> Router<PostlyRequestContext> {
    let loaded = ReadinessCheck(name: "index") {
        guard index.isLoaded else { throw SearchIndex.NotLoaded() }
    }
    let router = kit.makeRouter(openAPI: openAPI, readinessChecks: [loaded])
    SearchController(repository: MemorySearchRepository(index: index, contents: contents, database: kit.database)).addRoutes(to: router)
    return router
}
