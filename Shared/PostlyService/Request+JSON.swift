import Foundation
import Hummingbird
import PostlyModels

extension Request {
    /// The body decoded as `T`: 415 unless it is JSON, 413 over 1 MiB, 400 when it is not
    /// valid JSON or lacks a required key, each a problem document saying which.
    public func decodeJSON<T: Decodable>(as type: T.Type, context: PostlyRequestContext) async throws -> T {
        guard let contentType = headers[.contentType], Self.isJSON(contentType) else {
            throw APIError(.unsupportedMediaType, code: "unsupported_media_type", detail: "The request body must be application/json")
        }
        var request = self
        let body = try await request.collectBody(upTo: RequestLimits.maxBodyBytes)
        do {
            return try context.requestDecoder.decode(T.self, from: Data(body.readableBytesView))
        } catch let error as DecodingError {
            throw APIError.badRequest(Self.describe(error))
        }
    }

    static func isJSON(_ contentType: String) -> Bool {
        let mediaType = contentType.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
        return mediaType == "application/json" || (mediaType.hasPrefix("application/") && mediaType.hasSuffix("+json"))
    }

    /// Names the offending key, never echoes the body.
    static func describe(_ error: DecodingError) -> String {
        func path(_ codingPath: [any CodingKey]) -> String {
            codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
        }
        switch error {
        case .keyNotFound(let key, let context):
            return "Missing key '\(path(context.codingPath + [key]))'"
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            return "Wrong type for '\(path(context.codingPath))'"
        case .dataCorrupted(let context) where !context.codingPath.isEmpty:
            return "Invalid value for '\(path(context.codingPath))'"
        default:
            return "The request body is not valid JSON"
        }
    }
}
