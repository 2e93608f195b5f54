import Hummingbird
import Logging
import PostlyEvents
import PostlyKafka
import PostlyModels
import PostlyPostgres
import PostlyService

/// Builds the search service: the only place that constructs its dependencies.
///
/// - Parameter fetchJWKS: replaces fetching the auth service's keys (tests hand over a test key set).
public func buildApplication(
    _ configuration: SearchConfiguration, logger: Logger, fetchJWKS: AccessTokenVerifier.JWKSSource? = nil
) async throws -> some ApplicationProtocol {
    let kafka = configuration.service.kafka
    var postgres = configuration.service.postgres
    // The search statement's plan is the same whatever its words; planning it for each search
    // cost more than a third of its execution.
    postgres.settings["plan_cache_mode"] = "force_generic_plan"
    let database = Database(configuration: postgres, logger: logger)
    let producer = try KafkaProducer(configuration: kafka, logger: logger)
    let scaffold = ServiceScaffold(name: "search", configuration: configuration.service, logger: logger, fetchJWKS: fetchJWKS)
    try await scaffold.prepare(database: database, migrations: schema)
    let lexicon = Lexicon()

    let router = scaffold.makeRouter(openAPIDocument: openAPIDocument, readinessChecks: [.database(database), .broker(kafka)])
    SearchController(repository: PostgresSearchRepository(database: database, lexicon: lexicon)).addRoutes(to: router)

    return Application(
        router: router, configuration: scaffold.applicationConfiguration,
        services: scaffold.services + [
            database, producer, LexiconRefresher(lexicon: lexicon, database: database, logger: logger),
            EventConsumerRunner(
                name: "search", topics: [.posts, .users, .comments], database: database, kafka: kafka, deadLetters: producer,
                handler: SearchIndexer(), logger: logger),
        ],
        logger: logger)
}
