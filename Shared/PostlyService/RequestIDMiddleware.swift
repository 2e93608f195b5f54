import Foundation
import HTTPTypes
import Hummingbird

/// Puts `X-Request-ID` on every response, echoed from the request when it is sensible
/// (1...128 visible ASCII characters) or generated, and into the request's log metadata.
public struct RequestIDMiddleware: RouterMiddleware {
    public typealias Context = PostlyRequestContext

    public init() {}

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        let requestId = request.headers[.requestID].flatMap(Self.acceptable) ?? UUID().uuidString.lowercased()
        context.requestId = requestId
        context.logger[metadataKey: "requestId"] = .string(requestId)
        var response = try await next(request, context)
        response.headers[.requestID] = requestId
        return response
    }

    static func acceptable(_ value: String) -> String? {
        guard (1...128).contains(value.utf8.count), value.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else { return nil }
        return value
    }
}

extension HTTPField.Name {
    public static let requestID = Self("X-Request-ID")!
}
