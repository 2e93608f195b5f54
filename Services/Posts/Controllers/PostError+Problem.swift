import PostlyService

extension PostError: APIErrorConvertible {
    public var apiError: APIError {
        switch self {
        case .notFound: .notFound("Post not found")
        case .notAuthor: .forbidden("Only the author can change this post")
        case .authorNotFound: .notFound("Author not found")
        case .invalid(let field, let reason): .invalidFields([field: reason])
        }
    }
}
