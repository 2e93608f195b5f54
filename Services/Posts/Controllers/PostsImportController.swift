import Foundation
import Hummingbird
import PostlyEvents
import PostlyModels
import PostlyService

/// `POST /internal/import/posts` and `POST /internal/import/likes` (`postly-import`; only with
/// `POSTLY_IMPORT_TOKEN`, behind `ImportGate`): an earlier deployment's posts and likes,
/// insert-only, each batch in one transaction of the write unit.
struct PostsImportController: Sendable {
    let repository: any PostRepository
    let writes: WriteUnit

    struct PostBatch: Decodable {
        var posts: [SentPost]
        var aliases: [AuthorAlias]?
    }

    /// A post as the importer sends it; `importable()` checks what this service needs of it.
    struct SentPost: Decodable {
        var id: String
        var title: String
        var content: String
        var status: String
        var slug: String
        var coverImage: String?
        var author: Author
        var createdAt: Date
        var updatedAt: Date
        var publishedAt: Date?
        var views: Int

        enum CodingKeys: String, CodingKey {
            case id = "_id", title, content, status, slug, coverImage, author, createdAt, updatedAt, publishedAt, views
        }

        /// The post to store, or why it cannot be stored. Titles and contents over the API's
        /// limits are kept (the importer reports them); the cover image must be one a post here may have.
        func importable() -> Result<ImportedPost, ImportRefusal> {
            let stored = ImportCheck.problem(
                ids: ["_id": id, "author.userId": author.userId],
                texts: ["title": title, "content": content, "slug": slug, "author.name": author.name, "author.profilePicture": author.profilePicture])
            if let stored { return .failure(ImportRefusal(stored)) }
            // Past a unique index's row (postly-import cuts longer ones).
            guard slug.utf8.count <= ImportCheck.maximumIdBytes else {
                return .failure(ImportRefusal("slug is longer than \(ImportCheck.maximumIdBytes) bytes"))
            }
            guard let status = PostStatus(rawValue: status), status != .scheduled else {
                return .failure(ImportRefusal("status must be 'published' or 'draft'"))
            }
            guard (0...Post.maxImportedViews).contains(views) else {
                return .failure(ImportRefusal("views must be a count from 0 to \(Post.maxImportedViews)"))
            }
            var errors: [String: String] = [:]
            let cover = PostValidation.coverImage(coverImage, errors: &errors)
            if let problem = errors["coverImage"] { return .failure(ImportRefusal("coverImage \(problem)")) }
            return .success(
                ImportedPost(
                    id: id, title: title, content: content, status: status, slug: slug, coverImage: cover, author: author,
                    createdAt: createdAt, updatedAt: updatedAt, publishedAt: publishedAt, views: views))
        }
    }

    struct ImportRefusal: Error {
        var reason: String
        init(_ reason: String) { self.reason = reason }
    }

    struct LikeBatch: Decodable {
        var likes: [ImportedLike]
    }

    func addRoutes(to imports: RouterGroup<PostlyRequestContext>?) {
        imports?.post("posts", use: importPosts)
        imports?.post("likes", use: importLikes)
    }

    @Sendable func importPosts(_ request: Request, context: PostlyRequestContext) async throws -> ImportOutcome {
        let batch = try await request.decodeImportBatch(as: PostBatch.self, context: context) { $0.posts.count }
        let posts = batch.posts.map { ($0.id, $0.importable()) }
        // An alias names its merged user's old id; one that cannot (past a key's bytes) failed
        // the whole batch with 500, on every resume.
        var refusedAliases = ImportOutcome()
        let aliases = (batch.aliases ?? []).filter { alias in
            guard let problem = ImportCheck.problem(ids: ["from": alias.from, "to": alias.to]) else { return true }
            refusedAliases.reject("alias \(alias.from)", problem)
            return false
        }
        return try await writes.write { transaction in
            var outcome = refusedAliases
            for (id, post) in posts {
                switch post {
                case .success(let post): outcome.count(try await repository.importPost(post, in: transaction), id: id)
                case .failure(let refusal): outcome.reject(id, refusal.reason)
                }
            }
            try await repository.importAliases(aliases, in: transaction)
            return outcome
        }
    }

    @Sendable func importLikes(_ request: Request, context: PostlyRequestContext) async throws -> ImportOutcome {
        let batch = try await request.decodeImportBatch(as: LikeBatch.self, context: context) { $0.likes.count }
        var refused = ImportOutcome()
        let likes = batch.likes.filter { like in
            guard let problem = ImportCheck.problem(ids: ["postId": like.postId, "userId": like.userId]) else { return true }
            refused.reject(like.id, problem)
            return false
        }
        var outcome = try await writes.write { try await repository.importLikes(likes, in: $0) }
        outcome.rejected = refused.rejected + outcome.rejected
        return outcome
    }
}
