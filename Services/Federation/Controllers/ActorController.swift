import Hummingbird
import PostlyModels
import PostlyService

/// Actors and their collections: `/ap/actor` (the instance), `/ap/users/{userId}` (`Person`),
/// its outbox (published posts as `Create{Article}`, 20 a page), followers and following
/// (counted, not listed).
struct ActorController: Sendable {
    let documents: ActivityDocuments
    let actors: ActorRepository
    let keys: ActorKeys
    let articles: ArticleRepository
    let followers: FollowerRepository

    static let pageSize = 20

    func addRoutes(to router: Router<PostlyRequestContext>) {
        router.get("ap/actor", use: instanceActor)
        router.get("ap/users/:userId", use: person)
        router.get("ap/users/:userId/outbox", use: outbox)
        router.get("ap/users/:userId/followers", use: followerCollection)
        router.get("ap/users/:userId/following", use: following)
    }

    @Sendable func instanceActor(_ request: Request, context: PostlyRequestContext) async throws -> ActivityResponse {
        ActivityResponse(document: documents.instanceActor(publicKeyPEM: try await keys.keyPair(of: InstanceActor.id).publicKeyPEM))
    }

    @Sendable func person(_ request: Request, context: PostlyRequestContext) async throws -> ActivityResponse {
        let actor = try await self.actor(context)
        return ActivityResponse(document: documents.person(actor, publicKeyPEM: try await keys.keyPair(of: actor.userId).publicKeyPEM))
    }

    @Sendable func outbox(_ request: Request, context: PostlyRequestContext) async throws -> ActivityResponse {
        let actor = try await self.actor(context)
        let page = try request.uri.queryParameters.get("page").map { text in
            guard let page = Int(text), page >= 1, page <= 1_000_000 else { throw APIError.badRequest("page must be a positive integer") }
            return page
        }
        let total = try await articles.publishedCount(authorId: actor.userId)
        var posts: [ArticleRepository.Published] = []
        if let page { posts = try await articles.outbox(authorId: actor.userId, page: page, limit: Self.pageSize) }
        return ActivityResponse(document: documents.outbox(actor.userId, totalItems: total, page: page, pageSize: Self.pageSize, posts: posts))
    }

    @Sendable func followerCollection(_ request: Request, context: PostlyRequestContext) async throws -> ActivityResponse {
        let actor = try await self.actor(context)
        let id = documents.urls.followers(actor.userId)
        return ActivityResponse(document: documents.countedCollection(id: id, totalItems: try await followers.count(of: actor.userId)))
    }

    @Sendable func following(_ request: Request, context: PostlyRequestContext) async throws -> ActivityResponse {
        let actor = try await self.actor(context)
        return ActivityResponse(document: documents.countedCollection(id: documents.urls.following(actor.userId), totalItems: 0))
    }

    private func actor(_ context: PostlyRequestContext) async throws -> LocalActor {
        let userId = try context.parameters.require("userId")
        guard let actor = try await actors.actor(userId: userId) else { throw APIError.notFound("No such actor here") }
        return actor
    }
}
