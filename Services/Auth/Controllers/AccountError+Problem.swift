import PostlyService

extension AccountError: APIErrorConvertible {
    public var apiError: APIError {
        switch self {
        case .emailTaken: .conflict("An account with this email already exists")
        case .accountGone: .unauthorized("The account no longer exists")
        }
    }
}
