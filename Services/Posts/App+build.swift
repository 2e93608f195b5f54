import Foundation
import Hummingbird
import Logging
import PostlyEvents
import PostlyKafka
import PostlyModels
import PostlyPostgres
import PostlyService
import ServiceLifecycle

/// Builds the posts service: the only place that constructs its dependencies.
///
/// - Parameters:
///   - fetchJWKS: replaces fetching the auth service's keys (tests hand over a test key set).
///   - clock: the write unit's clock, which ages `Idempotency-Key`s (tests move it).
public func buildApplication(
    _ configuration: PostsConfiguration, logger: Logger, fetchJWKS: AccessTokenVerifier.JWKSSource? = nil,
    clock: @escaping WriteUnit.Clock = { Date() }
) async throws -> some ApplicationProtocol {
    let kafka = configuration.service.kafka
    let database = Database(configuration: configuration.service.postgres, logger: logger)
    let producer = try KafkaProducer(configuration: kafka, logger: logger)
    let writes = WriteUnit(database: database, producer: "posts", clock: clock, logger: logger)
    let repository = PostgresPostRepository(database: database, cacheLifetime: configuration.cacheLifetime, cacheBytes: configuration.cacheBytes)
    let views = ViewCounter(repository: repository, interval: configuration.viewFlushInterval, logger: logger)
    let scaffold = ServiceScaffold(name: "posts", configuration: configuration.service, logger: logger, fetchJWKS: fetchJWKS)
    try await scaffold.prepare(database: database, migrations: Migrations(schema))
    let router = scaffold.makeRouter(openAPIDocument: openAPIDocument, readinessChecks: [.database(database), .broker(kafka)])
    PostsController(repository: repository, views: views, writes: writes).addRoutes(to: router)
    // Shutdown runs in reverse: the HTTP server, then the consumers and relay, then the view
    // counter's last flush, then the producer and the database.
    return Application(
        router: router, configuration: scaffold.applicationConfiguration,
        services: scaffold.services + [
            database, producer, views, writes,
            OutboxRelay(database: database, publisher: producer, logger: logger),
            EventConsumerRunner(
                name: "posts", topics: [.users, .comments], database: database, kafka: kafka, deadLetters: producer,
                handler: ProjectionHandler(), logger: logger),
        ],
        logger: logger)
}

/// `postly-posts republish`: emits `post.updated` with the current state of every post
/// through the outbox and publishes the outbox before returning, so a new consumer can be
/// filled from scratch.
public func republishPosts(_ configuration: PostsConfiguration, logger: Logger) async throws -> Int {
    let database = Database(configuration: configuration.service.postgres, logger: logger)
    let producer = try KafkaProducer(configuration: configuration.service.kafka, logger: logger)
    let relay = OutboxRelay(database: database, publisher: producer, logger: logger)
    let writes = WriteUnit(database: database, producer: "posts", logger: logger)
    let repository = PostgresPostRepository(database: database)
    return try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await producer.run() }
        defer { group.cancelAll() }
        try await Migrations(schema).apply(to: database)
        let republished = try await repository.republishAll(through: writes)
        while true {
            _ = try await relay.publishPending()
            let pending = try await database.query("SELECT count(*) AS pending FROM outbox WHERE sent_at IS NULL")
            if try pending.first?.decode("pending", as: Int.self) == 0 { break }
            await sleepUnlessShuttingDown(for: .milliseconds(200))
        }
        await database.close()
        return republished
    }
}
