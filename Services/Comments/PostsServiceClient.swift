import Foundation
import Logging
import PostlyCurl
import PostlyModels
import PostlyService

/// Asks the posts service about a post the projection does not know yet (a comment a
/// moment after its post was created, before the event arrived), with the caller's
/// credentials, so the posts service applies its own visibility rules. It counts no view.
struct PostsServiceClient: Sendable {
    let baseURL: String
    let timeout: Duration
    let httpClient: CurlHTTPClient
    let logger: Logger

    /// The post as the posts service shows it to the caller; nil when it answers 404.
    /// Throws a 503 `APIError` when it is unreachable, slow, or answers something else.
    func post(id: String, authorization: String?) async throws -> KnownPost? {
        let path = id.addingPercentEncoding(withAllowedCharacters: Self.pathSegmentCharacters) ?? id
        var headers: [(name: String, value: String)] = [("Accept", "application/json"), ("User-Agent", "postly-comments")]
        if let authorization { headers.append(("Authorization", authorization)) }
        let request = CurlHTTPClient.Request(
            method: "GET", url: "\(baseURL)/api/posts/\(path)?countView=false", headers: headers,
            timeout: timeout, connectTimeout: min(timeout, .milliseconds(500)), maxResponseBytes: 4 << 20)
        let response: CurlHTTPClient.Response
        do {
            response = try await httpClient.execute(request)
        } catch let error as CurlError {
            logger.warning("the posts service is unreachable", metadata: ["error": "\(error)"])
            throw Self.unavailable
        }
        switch response.status {
        case 200:
            do {
                let post = try PostlyJSON.decoder().decode(AnsweredPost.self, from: Data(response.body))
                return KnownPost(id: post.id, authorId: post.author.userId, title: post.title, status: post.status, deleted: false)
            } catch {
                logger.warning("the posts service answered a post that does not decode", metadata: ["error": "\(error)"])
                throw Self.unavailable
            }
        case 404, 410:
            return nil
        default:
            logger.warning("the posts service answered an unexpected status", metadata: ["status": "\(response.status)"])
            throw Self.unavailable
        }
    }

    static let unavailable = APIError.unavailable("The posts service is unavailable", retryAfterSeconds: 2)

    /// One path segment: unreserved characters only, so an id can never change the path.
    static let pathSegmentCharacters = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    /// The keys of the posts service's `Post` this service uses; the others may change freely.
    struct AnsweredPost: Decodable {
        struct AnsweredAuthor: Decodable {
            var userId: String
        }

        var id: String
        var title: String
        var status: PostStatus
        var author: AnsweredAuthor

        enum CodingKeys: String, CodingKey {
            case id = "_id", title, status, author
        }
    }
}
