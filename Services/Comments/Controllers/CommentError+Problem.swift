import PostlyService

extension CommentError: APIErrorConvertible {
    var apiError: APIError {
        switch self {
        case .postNotFound: .notFound("Post not found")
        case .commentNotFound: .notFound("Comment not found")
        case .notAllowedToDelete: .forbidden("Only the comment's author or the post's author may delete it")
        }
    }
}
