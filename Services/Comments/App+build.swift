import Hummingbird
import Logging
import PostlyService

/// Builds the comments service: the only place that constructs its dependencies.
public func buildApplication(_ configuration: CommentsConfiguration, logger: Logger, options: ServiceKit.Options = .init()) throws -> some ApplicationProtocol {
    let kit = try ServiceKit(configuration.service, schema: schema, publishesEvents: true, logger: logger, options: options)
    return kit.application(
        router: buildRouter(kit, configuration),
        consumers: [kit.consumer(of: [.posts, .users], handler: CommentsEventHandler(writes: kit.writes))])
}

/// The comments routes on the kit's middleware. Builds without touching the database.
func buildRouter(_ kit: ServiceKit, _ configuration: CommentsConfiguration) -> Router<PostlyRequestContext> {
    let router = kit.makeRouter(openAPI: openAPI)
    let repository = PostgresCommentRepository(database: kit.database)
    let postsService = PostsServiceClient(
        baseURL: configuration.postsURL, timeout: configuration.postsTimeout, httpClient: kit.httpClient, logger: kit.logger)
    let posts = PostLookup(repository: repository, postsService: postsService)
    CommentsController(repository: repository, posts: posts, writes: kit.writes).addRoutes(to: router)
    CommentsImportController(repository: repository, posts: posts, writes: kit.writes, postWait: configuration.importPostWait)
        .addRoutes(to: kit.importRoutes(on: router))
    return router
}
