import Hummingbird
import Logging
import PostlyService

/// Builds the posts service: the only place that constructs its dependencies.
public func buildApplication(_ configuration: PostsConfiguration, logger: Logger, options: ServiceKit.Options = .init()) throws -> some ApplicationProtocol {
    let kit = try ServiceKit(configuration.service, schema: schema, publishesEvents: true, logger: logger, options: options)
    let model = ReadModel(database: kit.database, capacityBytes: configuration.cacheBytes)
    let repository = PostgresPostRepository(database: kit.database, model: model)
    let views = ViewCounter(repository: repository, interval: configuration.viewFlushInterval, logger: logger)
    let scheduler = PostScheduler(
        repository: repository, writes: kit.writes, bell: PostScheduler.bell(on: kit.database), poll: configuration.schedulerPoll, logger: logger)
    let changes = ChangeFeed(database: kit.database, logger: logger)
    let watch = ChangeWatch(feed: changes, model: model, logger: logger)
    let purge = TombstonePurge(feed: changes, writes: kit.writes, retention: configuration.tombstoneRetention, logger: logger)
    return kit.application(
        router: buildRouter(kit, repository: repository, views: views, changes: watch, feeds: model.feeds, feedSite: configuration.feedSite),
        consumers: [kit.consumer(of: [.users, .comments], handler: ProjectionHandler())],
        // Stopped after the consumers, before the database: the view counter's last flush, and
        // the changes it, the scheduler and the consumers made told to the other instances.
        services: [ReadModelSync(database: kit.database, model: model, logger: logger), views, scheduler, purge, watch],
        startup: { try await changes.checkEpoch() })
}

/// The posts routes on the kit's middleware. Builds without touching the database.
func buildRouter(
    _ kit: ServiceKit, repository: any PostRepository, views: ViewCounter, changes: ChangeWatch, feeds: FeedCache, feedSite: FeedSite
) -> Router<PostlyRequestContext> {
    let router = kit.makeRouter(openAPI: openAPI)
    PostsController(repository: repository, views: views, writes: kit.writes).addRoutes(to: router)
    PostsImportController(repository: repository, writes: kit.writes).addRoutes(to: kit.importRoutes(on: router))
    ChangesController(feed: changes.feed, bell: changes.bell).addRoutes(to: router)
    FeedsController(repository: repository, site: feedSite, cache: feeds).addRoutes(to: router)
    return router
}

/// `postly-posts republish`: emits `post.updated` with the current state of every post, so a
/// new consumer can be filled from scratch; returns once every event is published.
public func republishPosts(_ configuration: PostsConfiguration, logger: Logger) async throws -> Int {
    let kit = try ServiceKit(configuration.service, schema: schema, publishesEvents: true, logger: logger)
    return try await kit.run { try await PostgresPostRepository(database: kit.database).republishAll(through: kit.writes) }
}

/// `postly-posts rerender`: `ContentRerender` on the service's database; returns once its
/// events are published. How many posts changed.
public func rerenderPosts(_ configuration: PostsConfiguration, logger: Logger) async throws -> Int {
    let kit = try ServiceKit(configuration.service, schema: schema, publishesEvents: true, logger: logger)
    return try await kit.run { try await ContentRerender(writes: kit.writes, database: kit.database).run() }
}
