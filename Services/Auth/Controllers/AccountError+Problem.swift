import PostlyService

extension AccountError: APIErrorConvertible {
    public var apiError: APIError {
        switch self {
        case .emailTaken: .conflict("An account with this email already exists")
        case .accountGone: .unauthorized("The account no longer exists")
        case .accountConflict: APIError(.conflict, code: "account_conflict", detail: "This email is already linked to another Google account")
        }
    }
}

extension HashingQueue.Full: APIErrorConvertible {
    var apiError: APIError { .unavailable("Too many sign-ins at once; try again shortly", retryAfterSeconds: 1) }
}
