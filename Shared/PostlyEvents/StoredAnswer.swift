import Foundation
import PostlyModels

/// The answer of a write as sent to the client, kept so a retry with the same
/// `Idempotency-Key` gets it again byte for byte: the status, the headers that matter
/// (`Location`, `ETag`) and the body.
public struct StoredAnswer: Sendable, Hashable {
    public var status: Int
    public var headers: [Header]
    public var body: [UInt8]

    public struct Header: Sendable, Hashable, Codable {
        public var name: String
        public var value: String

        public init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    public init(status: Int, headers: [Header], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// `value` as JSON with Postly's encoder, the same bytes a route returning it would send.
    public init(status: Int, headers: [Header] = [], json value: some Encodable) throws {
        self.init(status: status, headers: headers, body: try PostlyJSON.encode(value))
    }

    func encodedHeaders() throws -> String {
        String(decoding: try PostlyJSON.encode(headers), as: UTF8.self)
    }

    static func decodeHeaders(_ text: String) throws -> [Header] {
        try decoder.decode([Header].self, from: Data(text.utf8))
    }

    private static let decoder = PostlyJSON.decoder()
}
