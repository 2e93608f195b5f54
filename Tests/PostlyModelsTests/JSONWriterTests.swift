import Foundation
import PostlyModels
import Testing

/// The hot objects write their own JSON; these hold it to `JSONEncoder`'s bytes, so a client
/// (and a stored idempotent answer) never sees a difference.
@Suite struct JSONWriterTests {
    /// Every ASCII character (controls, quotes, backslash, slash, DEL), accents, emoji,
    /// right-to-left text, a byte-order mark and the line separators JSON leaves alone.
    static let awkwardText = String(String.UnicodeScalarView((0..<0x80).map { Unicode.Scalar(UInt8($0)) }))
        + "Crème brûlée 😀 שלום \u{FEFF}\u{2028}\u{2029}</script>"

    static func post(text: String, optionalsPresent: Bool, comments: Int, seconds: Double) -> Post {
        let author = Author(userId: "u-\(text.prefix(3))", name: text, profilePicture: optionalsPresent ? "https://x.test/\(text)" : nil)
        let at = Date(timeIntervalSince1970: seconds)
        return Post(
            id: "p\(comments)", title: text, content: text + "\n\n" + text, contentHtml: optionalsPresent ? "<p>\(text)</p>" : nil,
            excerpt: String(text.prefix(200)), slug: "slug", status: optionalsPresent ? .published : .draft,
            coverImage: optionalsPresent ? "https://images.test/a.jpg" : nil, author: author, views: comments * 1000, likes: -1,
            comments: (0..<comments).map {
                Comment(id: "c\($0)", postId: "p", content: "\(text) \($0)", author: author, createdAt: at.addingTimeInterval(Double($0) * 0.001))
            },
            commentsCount: comments, readTime: Int.max, createdAt: at, updatedAt: at.addingTimeInterval(0.9996),
            publishedAt: optionalsPresent ? at : nil, version: 1)
    }

    static func encoderBytes(_ value: some Encodable) throws -> [UInt8] {
        Array(try PostlyJSON.encoder().encode(value))
    }

    @Test(arguments: [true, false])
    func postIsWrittenAsTheEncoderWritesIt(optionalsPresent: Bool) throws {
        for (index, text) in ["", "plain", Self.awkwardText].enumerated() {
            let post = Self.post(text: text, optionalsPresent: optionalsPresent, comments: index * 3, seconds: 1_795_000_000.123 - Double(index) * 1e9)
            #expect(try PostlyJSON.encode(post) == Self.encoderBytes(post))
        }
    }

    @Test func pagesListsAndCommentsAreWrittenAsTheEncoderWritesThem() throws {
        let posts = (0..<4).map { Self.post(text: Self.awkwardText, optionalsPresent: $0.isMultiple(of: 2), comments: $0, seconds: -0.25 + Double($0)) }
        let page = PostPage(posts: posts, pagination: Pagination(total: 41, page: 2, limit: 10))
        #expect(try PostlyJSON.encode(page) == Self.encoderBytes(page))
        #expect(try PostlyJSON.encode(posts) == Self.encoderBytes(posts))
        #expect(try PostlyJSON.encode(posts[3].comments) == Self.encoderBytes(posts[3].comments))
        #expect(try PostlyJSON.encode([PostlyModels.Comment]()) == Self.encoderBytes([PostlyModels.Comment]()))
        #expect(try PostlyJSON.encode(PostPage(posts: [], pagination: Pagination(total: 0, page: 1, limit: 10)))
            == Self.encoderBytes(PostPage(posts: [], pagination: Pagination(total: 0, page: 1, limit: 10))))
    }

    /// Texts are scanned eight bytes at a time: an escaped byte (and two together) at every
    /// place around those eight, between plain ASCII and multi-byte letters, is still escaped.
    @Test func escapesAreFoundWhereverTheyFallInALongText() throws {
        for escaped in ["\"", "\\", "\n", "\u{0}", "\u{1F}", "\"\\"] {
            for before in 0..<17 {
                for filler in ["a", "é", "😀"] {
                    let text = String(repeating: filler, count: before) + escaped + String(repeating: "x~\u{7F}/", count: 5)
                    let post = Self.post(text: text, optionalsPresent: true, comments: 0, seconds: 0)
                    #expect(try PostlyJSON.encode(post) == Self.encoderBytes(post), "\(before) × \(filler) then \(escaped.debugDescription)")
                }
            }
        }
    }

    @Test func otherValuesGoThroughTheEncoder() throws {
        let message = Message("Post deleted")
        #expect(try PostlyJSON.encode(message) == Self.encoderBytes(message))
    }

    /// Parts written as one string, each after the separator, read back by splitting on it and
    /// dropping what is before the first: an empty list and an empty part survive.
    @Test func partsWrittenAsOneStringSplitBackIntoThem() throws {
        for parts in [[], [""], ["a"], ["", "b", ""], [Self.awkwardText, "plain", ""]] {
            var json = JSONWriter()
            json.object { $0.field("parts", eachAfter: "\u{E000}", parts) }
            let read = try JSONDecoder().decode([String: String].self, from: Data(json.bytes))["parts"]!
            #expect(Array(read.split(separator: "\u{E000}", omittingEmptySubsequences: false).dropFirst().map(String.init)) == parts)
        }
        var none = JSONWriter()
        none.object { $0.field("parts", eachAfter: ",", nil) }
        #expect(String(decoding: none.bytes, as: UTF8.self) == #"{"parts":null}"#)
    }
}
