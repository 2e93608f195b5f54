import PostlyModels
import Foundation
import HTTPTypes
import Hummingbird
import PostlyService

/// `GET /api/posts/search?q&page&limit&formats`.
struct SearchController: Sendable {
    let repository: any SearchRepository

    /// The contract's bounds of `q`, in characters after trimming.
    static let queryLength = 1...200
    /// Without `page`/`limit`, the first 20.
    static let defaultLimit = 20

    func addRoutes(to router: Router<PostlyRequestContext>) {
        router.get("api/posts/search", use: search)
    }

    @Sendable func search(_ request: Request, context: PostlyRequestContext) async throws -> Response {
        let query = request.uri.formParameters
        let text = try Self.text(query.get("q"))
        let page = try PageRequest(query: query, defaultLimit: Self.defaultLimit)
        let formats = ListFormats(parameter: query.get("formats"))
        let found = try await repository.search(text, page: page, includeHTML: formats.html)
        return Response(
            status: .ok,
            headers: [
                .contentType: "application/json; charset=utf-8", .contentLength: String(found.body.count),
                .totalCount: String(found.total),
            ],
            body: .init(byteBuffer: ByteBuffer(bytes: found.body)))
    }

    /// `q` trimmed, with control characters (a NUL among them) as spaces: text to search,
    /// never syntax. Missing, blank or longer than 200 characters answers 400.
    static func text(_ q: String?) throws -> String {
        let cleaned = String(String.UnicodeScalarView((q ?? "").unicodeScalars.map { CharacterSet.controlCharacters.contains($0) ? " " : $0 }))
        let text = cleaned.trimmingCharacters(in: .whitespacesAndNewlines)
        guard queryLength.contains(text.count) else {
            throw APIError.badRequest("'q' must be \(queryLength.lowerBound) to \(queryLength.upperBound) characters")
        }
        return text
    }
}

extension HTTPField.Name {
    static let totalCount = Self("X-Total-Count")!
}
