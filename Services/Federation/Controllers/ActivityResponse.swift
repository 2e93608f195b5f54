import HTTPTypes
import Hummingbird

/// A JSON document of the fediverse, as its media type says: `application/activity+json` for
/// ActivityPub (which also answers `Accept: application/ld+json; profile=...`), JRD for
/// WebFinger, plain JSON for NodeInfo.
struct ActivityResponse: ResponseGenerator {
    static let activityJSON = "application/activity+json; charset=utf-8"

    var document: JSONValue
    var status: HTTPResponse.Status = .ok
    var contentType = Self.activityJSON
    var headers: HTTPFields = [:]

    func response(from request: Request, context: some RequestContext) throws -> Response {
        let bytes = document.bytes
        var headers = headers
        headers[.contentType] = contentType
        headers[.contentLength] = String(bytes.count)
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}
