import Foundation
import Hummingbird
import Logging
import PostlyEvents
import PostlyKafka
import PostlyModels
import PostlyPostgres
import PostlyService

/// Builds the comments service: the only place that constructs its dependencies.
///
/// - Parameters:
///   - fetchJWKS: replaces fetching the auth service's keys (tests hand over a test key set).
///   - clock: the write unit's clock, which ages `Idempotency-Key`s (tests move it).
public func buildApplication(
    _ configuration: CommentsConfiguration, logger: Logger, fetchJWKS: AccessTokenVerifier.JWKSSource? = nil,
    clock: @escaping WriteUnit.Clock = { Date() }
) async throws -> some ApplicationProtocol {
    let kafka = configuration.service.kafka
    let database = Database(configuration: configuration.service.postgres, logger: logger)
    let producer = try KafkaProducer(configuration: kafka, logger: logger)
    let writes = WriteUnit(database: database, producer: "comments", clock: clock, logger: logger)
    let scaffold = ServiceScaffold(name: "comments", configuration: configuration.service, logger: logger, fetchJWKS: fetchJWKS)
    try await scaffold.prepare(database: database, migrations: schema)
    let repository = PostgresCommentRepository(database: database)
    let postsService = PostsServiceClient(
        baseURL: configuration.postsURL, timeout: configuration.postsTimeout, httpClient: scaffold.httpClient, logger: logger)

    let router = scaffold.makeRouter(openAPIDocument: openAPIDocument, readinessChecks: [.database(database), .broker(kafka)])
    CommentsController(repository: repository, posts: PostLookup(repository: repository, postsService: postsService), writes: writes)
        .addRoutes(to: router)

    return Application(
        router: router, configuration: scaffold.applicationConfiguration,
        services: scaffold.services + [
            database, producer, writes, OutboxRelay(database: database, publisher: producer, logger: logger),
            EventConsumerRunner(
                name: "comments", topics: [.posts, .users], database: database, kafka: kafka, deadLetters: producer,
                handler: CommentsEventHandler(writes: writes), logger: logger),
        ],
        logger: logger)
}
