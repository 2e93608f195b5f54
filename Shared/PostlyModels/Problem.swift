/// An RFC 9457 problem document, the body of every error response
/// (`Content-Type: application/problem+json`).
public struct Problem: Codable, Sendable, Hashable {
    public var type: String
    public var title: String
    public var status: Int
    public var detail: String
    /// Repeats `detail`: clients of the earlier backend read `error`.
    public var error: String
    /// A stable, machine-readable reason such as `not_found` or `validation_failed`.
    public var code: String
    public var requestId: String?
    /// Per-field messages of a validation failure.
    public var errors: [String: String]?

    public init(status: Int, title: String, detail: String, code: String, requestId: String? = nil, errors: [String: String]? = nil) {
        self.type = "about:blank"
        self.title = title
        self.status = status
        self.detail = detail
        self.error = detail
        self.code = code
        self.requestId = requestId
        self.errors = errors
    }
}
