import Foundation
import Hummingbird
import Logging
import PostlyCurl
import PostlyEvents
import PostlyKafka
import PostlyModels
import PostlyPostgres

/// The one place where errors become answers: RFC 9457 problem documents
/// (`application/problem+json`). Expected errors keep their status; a dead dependency
/// answers 503 with `Retry-After`; anything else is logged once at `.error` and answers
/// a 500 that says nothing about the inside.
public struct ProblemMiddleware: RouterMiddleware {
    public typealias Context = PostlyRequestContext

    public init() {}

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            let apiError = Self.apiError(for: error)
            if apiError.status == .internalServerError {
                context.logger.error("unexpected error", metadata: ["error": "\(String(reflecting: error))"])
            }
            return Self.response(for: apiError, requestId: context.requestId)
        }
    }

    static func apiError(for error: any Error) -> APIError {
        switch error {
        case let error as APIError:
            return error
        case let error as any APIErrorConvertible:
            return error.apiError
        case let error as IdempotencyError:
            switch error {
            case .keyReused: return .invalidFields(["Idempotency-Key": "was already used with a different request"])
            case .inProgress: return .conflict("A request with this Idempotency-Key is still in progress")
            }
        case let error as HTTPError:
            return apiError(status: error.status, headers: error.headers)
        case let error as any HTTPResponseError:
            return apiError(status: error.status, headers: [:])
        case is DecodingError:
            return .badRequest("The request body is not valid JSON for this route")
        case let error as DatabaseError:
            switch error {
            case .connectionFailed, .commitOutcomeUnknown: return .unavailable("The database is unavailable")
            case .deadlockDetected, .serializationFailure:
                // Still losing a race after the write unit's retries: the client may try again.
                return .unavailable("The database is busy", retryAfterSeconds: 1)
            case .invalidParameter: return .badRequest("The request contains a character that cannot be stored")
            default: return error.isUnavailable ? .unavailable("The database is unavailable") : internalError
            }
        case is KafkaError:
            return .unavailable("The message broker is unavailable")
        case is CurlError:
            return .unavailable("An upstream service is unavailable")
        default:
            return internalError
        }
    }

    static let internalError = APIError(.internalServerError, code: "internal_error", detail: "Something went wrong on our side")

    /// Hummingbird's own errors (no route, body too large, ...) with our wording.
    static func apiError(status: HTTPResponse.Status, headers: HTTPFields) -> APIError {
        let (code, detail): (String, String) =
            switch status {
            case .notFound: ("not_found", "Not found")
            case .contentTooLarge: ("body_too_large", "The request body is larger than 1 MiB")
            case .methodNotAllowed: ("method_not_allowed", "This method is not allowed here")
            case .unsupportedMediaType: ("unsupported_media_type", "The request body must be application/json")
            case .badRequest: ("bad_request", "The request is malformed")
            default: ("http_\(status.code)", status.reasonPhrase)
            }
        if status.code >= 500 { return internalError }
        return APIError(status, code: code, detail: detail, headers: headers)
    }

    public static func response(for error: APIError, requestId: String) -> Response {
        let problem = Problem(
            status: Int(error.status.code), title: error.status.reasonPhrase, detail: error.detail, code: error.code,
            requestId: requestId.isEmpty ? nil : requestId, errors: error.fieldErrors)
        var headers = error.headers
        headers[.contentType] = "application/problem+json"
        let body = (try? PostlyJSON.encode(problem)) ?? []
        return Response(status: error.status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}
