import Foundation
import Hummingbird
import PostlyModels

extension Request {
    /// The body decoded as `T`, strictly, the one way every service reads a JSON body:
    /// 415 unless it is JSON, 413 over 1 MiB; 400 when it is not valid JSON, has data after
    /// the value, is not UTF-8, is not an object, repeats a key or nests deeper than 64; 422
    /// naming the field when one is missing or of the wrong type. Never echoes the body.
    /// `maxBytes` lowers the size limit for a route that takes less.
    public func decodeJSON<T: Decodable>(
        as type: T.Type, context: some RequestContext, maxBytes: Int = RequestLimits.maxBodyBytes
    ) async throws -> T {
        guard let contentType = headers[.contentType], Self.isJSON(contentType) else {
            throw APIError(.unsupportedMediaType, code: "unsupported_media_type", detail: "The request body must be application/json")
        }
        var request = self
        let body: ByteBuffer
        do {
            body = try await request.collectBody(upTo: maxBytes)
        } catch let error as HTTPError where error.status == .contentTooLarge && maxBytes < RequestLimits.maxBodyBytes {
            throw APIError(.contentTooLarge, code: "body_too_large", detail: "The request body is larger than \(maxBytes >> 10) KiB")
        }
        return try Self.decodeJSONBody(as: T.self, from: Array(body.readableBytesView), decoder: PostlyRequestContext.decoder)
    }

    static func decodeJSONBody<T: Decodable>(as type: T.Type, from bytes: [UInt8], decoder: JSONDecoder) throws -> T {
        if let problem = JSONBodyCheck.problem(in: bytes) { throw APIError.badRequest(problem) }
        do {
            return try decoder.decode(T.self, from: Data(bytes))
        } catch let error as DecodingError {
            throw Self.apiError(for: error)
        }
    }

    static func isJSON(_ contentType: String) -> Bool {
        let mediaType = contentType.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
        return mediaType == "application/json" || (mediaType.hasPrefix("application/") && mediaType.hasSuffix("+json"))
    }

    /// 422 naming the field a well-formed body gets wrong; 400 when it is not JSON at all.
    static func apiError(for error: DecodingError) -> APIError {
        func path(_ codingPath: [any CodingKey]) -> String {
            codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
        }
        switch error {
        case .keyNotFound(let key, let context):
            return .invalidFields([path(context.codingPath + [key]): "is required"])
        case .valueNotFound(_, let context) where !context.codingPath.isEmpty:
            return .invalidFields([path(context.codingPath): "is required"])
        case .typeMismatch(_, let context) where !context.codingPath.isEmpty:
            return .invalidFields([path(context.codingPath): "has the wrong type"])
        case .dataCorrupted(let context) where !context.codingPath.isEmpty:
            return .invalidFields([path(context.codingPath): "is not a valid value"])
        default:
            return .badRequest("The request body is not valid JSON")
        }
    }
}
