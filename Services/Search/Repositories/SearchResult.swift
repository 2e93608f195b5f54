import Foundation
import PostlyModels

/// One search result: the post as the posts service lists it (`contentHtml` only when the
/// query asked for it), plus `highlights`.
struct SearchResult: Encodable, Sendable, Hashable {
    var post: Post
    var highlights: Highlights

    enum CodingKeys: String, CodingKey {
        case highlights
    }

    func encode(to encoder: any Encoder) throws {
        try post.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(highlights, forKey: .highlights)
    }
}

extension SearchResult: JSONWritable {
    /// The post's fields, then `highlights` (the same object `encode(to:)` gives, with this
    /// one key last instead of sorted in).
    func write(to json: inout JSONWriter) {
        json.object { json in
            post.writeFields(to: &json)
            json.field("highlights", highlights)
        }
    }
}

extension Highlights: JSONWritable {
    func write(to json: inout JSONWriter) {
        json.object { json in
            json.field("excerpt", excerpt)
            json.field("title", title)
        }
    }
}

/// One page of results, best first, and the number of all matches.
struct SearchPage: Sendable {
    /// The results' post ids, best first.
    var ids: [String]
    var total: Int
    /// The answer: a JSON array of the results.
    var body: [UInt8]

    static let empty = SearchPage(ids: [], total: 0, body: Array("[]".utf8))
}
