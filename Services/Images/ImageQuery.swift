import Foundation

/// One question for the image provider, normalized: the same question asked in other
/// spellings (`  Red   CAR `, `red car`) is one cache entry and one upstream call.
struct ImageQuery: Sendable, Hashable {
    enum Kind: String, Sendable {
        case search, curated
    }

    var kind: Kind
    /// Trimmed, lower-cased, inner white space collapsed to one space; nil for curated.
    var text: String?
    var perPage: Int
    var page: Int

    static let textLength = 1...100
    static let perPageRange = 1...80
    static let pageRange = 1...1000
    /// What the app asks for.
    static let defaultPerPage = 6

    /// The cache key.
    var key: String { "\(kind.rawValue)|\(perPage)|\(page)|\(text ?? "")" }

    /// Path and query of the upstream call, the text percent-encoded as UTF-8.
    var upstreamPathAndQuery: String {
        var parameters = ["per_page=\(perPage)", "page=\(page)"]
        if let text {
            parameters.insert("query=\(text.addingPercentEncoding(withAllowedCharacters: Self.unreserved) ?? "")", at: 0)
        }
        return "/v1/\(kind.rawValue)?" + parameters.joined(separator: "&")
    }

    /// Unreserved characters of RFC 3986: everything else is percent-encoded.
    static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    static func normalized(_ text: String) -> String {
        text.split(whereSeparator: \.isWhitespace).joined(separator: " ").lowercased()
    }
}
