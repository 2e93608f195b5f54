import HTTPTypes

/// An error a route answers on purpose. `ProblemMiddleware` turns it into a problem
/// document; anything else thrown is unexpected and answers 500 without details.
public struct APIError: Error, Sendable {
    public var status: HTTPResponse.Status
    /// Stable and machine-readable, such as `not_found`.
    public var code: String
    /// For people; never carries SQL, stack traces, host names or secrets.
    public var detail: String
    /// Per-field messages of a validation failure.
    public var fieldErrors: [String: String]?
    public var headers: HTTPFields

    public init(_ status: HTTPResponse.Status, code: String, detail: String, fieldErrors: [String: String]? = nil, headers: HTTPFields = [:]) {
        self.status = status
        self.code = code
        self.detail = detail
        self.fieldErrors = fieldErrors
        self.headers = headers
    }

    public static func badRequest(_ detail: String) -> APIError { .init(.badRequest, code: "bad_request", detail: detail) }
    public static func unauthorized(_ detail: String) -> APIError { .init(.unauthorized, code: "unauthorized", detail: detail) }
    public static func forbidden(_ detail: String) -> APIError { .init(.forbidden, code: "forbidden", detail: detail) }
    public static func notFound(_ detail: String) -> APIError { .init(.notFound, code: "not_found", detail: detail) }
    public static func conflict(_ detail: String) -> APIError { .init(.conflict, code: "conflict", detail: detail) }
    public static func preconditionFailed(_ detail: String) -> APIError { .init(.preconditionFailed, code: "precondition_failed", detail: detail) }

    /// 422 with a message per invalid field.
    public static func invalidFields(_ fieldErrors: [String: String]) -> APIError {
        let fields = fieldErrors.keys.sorted().joined(separator: ", ")
        return .init(.unprocessableContent, code: "validation_failed", detail: "Invalid fields: \(fields)", fieldErrors: fieldErrors)
    }

    public static func tooManyRequests(retryAfterSeconds: Int, _ detail: String = "Too many requests") -> APIError {
        .init(.tooManyRequests, code: "rate_limited", detail: detail, headers: [.retryAfter: String(max(1, retryAfterSeconds))])
    }

    /// 503: a dependency is down. `detail` says which, without internal addresses.
    public static func unavailable(_ detail: String, retryAfterSeconds: Int = 5) -> APIError {
        .init(.serviceUnavailable, code: "unavailable", detail: detail, headers: [.retryAfter: String(retryAfterSeconds)])
    }
}

/// A domain error (`PostError.notFound`, ...) that knows its problem document. Repositories
/// throw their domain's errors without importing this module; the conformance lives with
/// the service's controllers, and `ProblemMiddleware` answers it.
public protocol APIErrorConvertible: Error {
    var apiError: APIError { get }
}
