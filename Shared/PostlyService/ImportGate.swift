import Crypto
import Foundation
import Hummingbird
import PostlyModels

/// Guards the internal import routes (`/internal/...`, used by `postly-import` on the service's
/// own port; the gateway never routes them). Without `POSTLY_IMPORT_TOKEN` they answer 404 as if
/// they did not exist (they are not routed either); with it, a request must present
/// `Authorization: Bearer <token>` (compared in constant time) or it answers 401. Runs before
/// the authentication middleware, which leaves these paths alone: the import token is no access token.
public struct ImportGate: RouterMiddleware {
    public typealias Context = PostlyRequestContext

    /// The token's SHA-256: two digests compare in constant time (swift-crypto's `Digest ==`),
    /// whatever the lengths.
    let tokenDigest: SHA256Digest?

    public init(token: Secret?) {
        tokenDigest = token.map { SHA256.hash(data: Data($0.value.utf8)) }
    }

    /// Whether the path leads under `/internal`, read as leniently as the router reads it: empty
    /// and `.` segments do not count (the router routes `//internal/...` there too), nor case or
    /// percent-encoding. A path that reaches an import route can never pass by the gate.
    static func isInternal(_ path: String) -> Bool {
        guard let first = path.split(separator: "/").first(where: { $0 != "." }) else { return false }
        return (first.removingPercentEncoding ?? String(first)).lowercased() == "internal"
    }

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard Self.isInternal(request.uri.path) else { return try await next(request, context) }
        guard let tokenDigest else { throw APIError.notFound("Not found") }
        let scheme = "bearer "
        guard let authorization = request.headers[.authorization], authorization.count > scheme.count,
            authorization.prefix(scheme.count).lowercased() == scheme,
            SHA256.hash(data: Data(authorization.dropFirst(scheme.count).utf8)) == tokenDigest
        else {
            throw APIError.unauthorized("The import token is missing or wrong")
        }
        return try await next(request, context)
    }
}

/// The bounds of one batch of an import route: under the 1 MiB body limit with room to spare.
public enum ImportLimits {
    public static let maxDocuments = 500
    public static let maxBodyBytes = 900 << 10
}

/// What every import route checks of each document before storing it: what PostgreSQL or the
/// services cannot keep is that document's rejection, never the batch's failure (a NUL failed
/// the whole batch with 400, and an id of kilobytes, past a unique index's row, with 500).
public enum ImportCheck {
    /// Bytes of an id (MongoDB's are 24 characters, Google's subjects 21 digits).
    public static let maximumIdBytes = 255

    /// Why the document cannot be stored: the first of its `ids` that cannot name a document
    /// here, else the first of its `texts` holding a NUL; nil when it can (an absent field
    /// passes). An id holds no spaces or control characters either: ids go into URLs and into
    /// the lines that tell a service's instances what changed.
    public static func problem(ids: KeyValuePairs<String, String?>, texts: KeyValuePairs<String, String?> = [:]) -> String? {
        for case let (field, id?) in ids {
            if id.isEmpty { return "\(field) is empty" }
            if id.utf8.count > maximumIdBytes { return "\(field) is longer than \(maximumIdBytes) bytes" }
            if id.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.properties.generalCategory == .control }) {
                return "\(field) contains a space or a control character"
            }
        }
        for case let (field, text?) in texts where text.utf8.contains(0) { return "\(field) \(TextLimit.nulCharacters)" }
        return nil
    }
}

extension ServiceKit {
    /// The group of the service's import routes (`/internal/import/...`); nil, so the routes do
    /// not exist, when no import token is configured.
    public func importRoutes(on router: Router<PostlyRequestContext>) -> RouterGroup<PostlyRequestContext>? {
        configuration.importToken == nil ? nil : router.group("internal/import")
    }
}

extension Request {
    /// A batch of an import route: `decodeJSON` within `ImportLimits` (413 over 900 KiB, 422
    /// over 500 documents, as `count` counts them); nothing is written before this returns.
    public func decodeImportBatch<T: Decodable>(as type: T.Type, context: some RequestContext, count: (T) -> Int) async throws -> T {
        let batch = try await decodeJSON(as: T.self, context: context, maxBytes: ImportLimits.maxBodyBytes)
        guard count(batch) <= ImportLimits.maxDocuments else {
            throw APIError(
                .unprocessableContent, code: "too_many_documents", detail: "A batch holds at most \(ImportLimits.maxDocuments) documents")
        }
        return batch
    }
}

extension ImportOutcome: ResponseEncodable {}
