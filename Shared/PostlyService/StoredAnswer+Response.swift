import HTTPTypes
import Hummingbird
import PostlyEvents

extension StoredAnswer: ResponseGenerator {
    /// The stored answer as sent the first time: status, headers and body, byte for byte.
    public func response(from request: Request, context: some RequestContext) -> Response {
        var fields: HTTPFields = [.contentType: "application/json; charset=utf-8"]
        for header in headers {
            if let name = HTTPField.Name(header.name) { fields[name] = header.value }
        }
        return Response(
            status: HTTPResponse.Status(code: status), headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}

extension IdempotencyKey {
    /// The request's `Idempotency-Key` for a write by `userId`: nil without the header, 400
    /// when it is empty or longer than 255 characters or their 1,020 bytes (the contract's
    /// limits hold in bytes too; the key is part of an index). Collects the body (413 over
    /// 1 MiB) for the fingerprint; `request.decodeJSON` reads it again afterwards.
    public static func from(_ request: inout Request, userId: String) async throws -> IdempotencyKey? {
        guard let key = request.headers[.idempotencyKey] else { return nil }
        if let problem = TextLimit(characters: maximumLength).problem(with: key) {
            throw APIError.badRequest("'Idempotency-Key' \(problem)")
        }
        guard !key.isEmpty else { throw APIError.badRequest("'Idempotency-Key' must not be empty") }
        let body = try await request.collectBody(upTo: RequestLimits.maxBodyBytes)
        return IdempotencyKey(
            key: key, userId: userId, method: request.method.rawValue, path: request.uri.path, body: Array(body.readableBytesView))
    }
}

extension HTTPField.Name {
    public static let idempotencyKey = Self("Idempotency-Key")!
}
