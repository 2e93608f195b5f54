import HTTPTypes
import Hummingbird
import PostlyModels
import PostlyService

/// `GET /api/images/search?query&per_page&page` and `GET /api/images/curated?per_page&page`,
/// answered in Pexels' own shape, to callers with a token (checked before the parameters).
struct ImagesController: Sendable {
    let suggestions: ImageSuggestions

    func addRoutes(to router: Router<PostlyRequestContext>) {
        let images = router.authenticated("api/images")
        images.get("search", use: search)
        images.get("curated", use: curated)
    }

    @Sendable func search(_ request: Request, context: AuthenticatedRequestContext) async throws -> Response {
        // A `+` is a space, as in a form-encoded query (what Pexels clients send); `%2B` a plus.
        let parameters = request.uri.formParameters
        let text = ImageQuery.normalized(parameters.get("query") ?? "")
        guard ImageQuery.textLength.contains(text.count) else {
            throw APIError.badRequest(
                "'query' must be \(ImageQuery.textLength.lowerBound) to \(ImageQuery.textLength.upperBound) characters after trimming")
        }
        let query = ImageQuery(kind: .search, text: text, perPage: try Self.perPage(parameters), page: try Self.page(parameters))
        return try await respond(query, userId: context.identity.userId)
    }

    @Sendable func curated(_ request: Request, context: AuthenticatedRequestContext) async throws -> Response {
        let parameters = request.uri.queryParameters
        let query = ImageQuery(kind: .curated, text: nil, perPage: try Self.perPage(parameters), page: try Self.page(parameters))
        return try await respond(query, userId: context.identity.userId)
    }

    func respond(_ query: ImageQuery, userId: String) async throws -> Response {
        let answer = try await suggestions.answer(query, userId: userId)
        var headers: HTTPFields = [.contentType: "application/json; charset=utf-8"]
        if answer.isStale { headers[.warning] = #"110 - "Response is Stale""# }
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: answer.body))
    }

    static func perPage(_ parameters: Parameters) throws -> Int {
        try PageRequest.integer(parameters, "per_page", in: ImageQuery.perPageRange, default: ImageQuery.defaultPerPage)
    }

    static func page(_ parameters: Parameters) throws -> Int {
        try PageRequest.integer(parameters, "page", in: ImageQuery.pageRange, default: 1)
    }
}

extension HTTPField.Name {
    static let warning = Self("Warning")!
}
