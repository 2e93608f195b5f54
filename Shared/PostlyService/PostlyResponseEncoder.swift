import Hummingbird
import PostlyModels

/// Every JSON answer of every service, through `PostlyJSON.encode`: the hot objects write
/// their own JSON, the rest goes through the one `JSONEncoder` configuration.
public struct PostlyResponseEncoder: ResponseEncoder {
    public func encode(_ value: some Encodable, from request: Request, context: some RequestContext) throws -> Response {
        let bytes = try PostlyJSON.encode(value)
        return Response(
            status: .ok,
            headers: [.contentType: "application/json; charset=utf-8", .contentLength: String(bytes.count)],
            body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}
