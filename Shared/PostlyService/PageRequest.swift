import Hummingbird
import PostlyModels

/// `page` (>= 1, default 1) and `limit` (1...100, default 10) from the query; anything
/// else answers 400.
extension PageRequest {
    public init(query: Parameters, defaultLimit: Int = 10) throws {
        self.init(
            page: try Self.integer(query, "page", in: 1...Int(Int32.max), default: 1),
            limit: try Self.integer(query, "limit", in: 1...100, default: defaultLimit))
    }

    /// Whether the query asks for a page at all (some routes answer everything without one).
    public static func isRequested(in query: Parameters) -> Bool {
        query.get("page") != nil || query.get("limit") != nil
    }

    /// The integer `name` of `query` within `range`, `value` when absent, else 400.
    public static func integer(_ query: Parameters, _ name: String, in range: ClosedRange<Int>, default value: Int) throws -> Int {
        guard let text = query.get(name) else { return value }
        guard let number = Int(text), range.contains(number) else {
            throw APIError.badRequest("'\(name)' must be an integer from \(range.lowerBound) to \(range.upperBound)")
        }
        return number
    }
}

extension Request {
    /// The page the query asks for.
    public func pageRequest() throws -> PageRequest {
        try PageRequest(query: uri.queryParameters)
    }
}
