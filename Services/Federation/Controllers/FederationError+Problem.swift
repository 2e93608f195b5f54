import PostlyService

/// The inbox's refusals, beside `SignatureError` (401).
enum FederationError: Error, APIErrorConvertible {
    /// Not JSON, without `id`, `type` and `actor`, or with an `id` over 2,048 bytes.
    case invalidActivity
    /// A Follow (or an inbox) of an actor that is not ours.
    case unknownLocalActor

    var apiError: APIError {
        switch self {
        case .invalidActivity:
            APIError(.badRequest, code: "invalid_activity", detail: "The body is not an activity: a JSON object with id (at most 2,048 bytes), type and actor")
        case .unknownLocalActor:
            .notFound("No such actor here")
        }
    }
}

extension SignatureError: APIErrorConvertible {
    var apiError: APIError {
        // Deferred, not refused: a sender tries a 503 again (it drops a delivery refused with a 4xx).
        if self == .keyFetchesDeferred { return .unavailable(reason, retryAfterSeconds: 60) }
        if self == .keyLookupDeferred { return .unavailable(reason, retryAfterSeconds: 10) }
        return APIError(.unauthorized, code: "signature_invalid", detail: reason)
    }
}
