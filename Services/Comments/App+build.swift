import Hummingbird
import Logging
import PostlyEvents
import PostlyKafka
import PostlyModels
import PostlyPostgres
import PostlyService

/// Builds the comments service: the only place that constructs its dependencies.
///
/// - Parameter fetchJWKS: replaces fetching the auth service's keys (tests hand over a test key set).
public func buildApplication(
    _ configuration: CommentsConfiguration, logger: Logger, fetchJWKS: AccessTokenVerifier.JWKSSource? = nil
) async throws -> some ApplicationProtocol {
    let kafka = configuration.service.kafka
    let database = Database(configuration: configuration.service.postgres, logger: logger)
    let producer = try KafkaProducer(configuration: kafka, logger: logger)
    let scaffold = ServiceScaffold(name: "comments", configuration: configuration.service, logger: logger, fetchJWKS: fetchJWKS)
    try await scaffold.prepare(database: database, migrations: schema)
    let repository = PostgresCommentRepository(database: database)
    let postsService = PostsServiceClient(
        baseURL: configuration.postsURL, timeout: configuration.postsTimeout, httpClient: scaffold.httpClient, logger: logger)

    let router = scaffold.makeRouter(openAPIDocument: openAPIDocument, readinessChecks: [.database(database), .broker(kafka)])
    CommentsController(repository: repository, posts: PostLookup(repository: repository, postsService: postsService))
        .addRoutes(to: router)

    return Application(
        router: router, configuration: scaffold.applicationConfiguration,
        services: scaffold.services + [
            database, producer, OutboxRelay(database: database, publisher: producer, logger: logger),
            EventConsumerRunner(
                name: "comments", topics: [.posts, .users], database: database, kafka: kafka, deadLetters: producer,
                handler: CommentsEventHandler(), logger: logger),
        ],
        logger: logger)
}
