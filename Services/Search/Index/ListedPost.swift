import PostlyModels

/// A post's JSON as lists show it, written once when the post is indexed: what a search adds
/// or keeps current itself (the author's name and picture, the comments, the likes, the
/// content) is written into the gaps for each answer. The content is not kept here: it is half
/// of a post's memory, and the index keeps it split already (`IndexedText`, for excerpts; a
/// Markdown post's text, not its Markdown), so an answer takes it from `ContentCache` or the
/// database. Nor is `contentHtml` (read for the page when asked for). The keys are
/// `Post.writeFields`' keys in the same sorted order.
struct ListedPost: Sendable, Equatable {
    /// `{"_id":...` | `,"coverImage":...,"createdAt":...,"excerpt":...` | `,"publishAt":...,"views":...`
    private let bytes: [UInt8]
    private let coverStart: Int
    private let publishedStart: Int

    /// The post's version, which its content is cached by.
    let version: Int

    init(_ post: Post) {
        version = post.version
        var bytes: [UInt8] = [UInt8(ascii: "{")]
        bytes.reserveCapacity(512)
        func append(_ write: (inout JSONWriter) -> Void) {
            var json = JSONWriter(capacity: 64)
            write(&json)
            if bytes.count > 1 { bytes.append(UInt8(ascii: ",")) }
            bytes.append(contentsOf: json.bytes)
        }
        append { $0.field("_id", post.id) }
        coverStart = bytes.count
        append { json in
            json.field("coverImage", post.coverImage)
            json.field("createdAt", post.createdAt)
            json.field("excerpt", post.excerpt)
        }
        publishedStart = bytes.count
        append { json in
            json.field("publishAt", post.publishAt)
            json.field("publishedAt", post.publishedAt)
            json.field("readTime", post.readTime)
            json.field("slug", post.slug)
            json.field("status", post.status.rawValue)
            json.field("title", post.title)
            json.field("updatedAt", post.updatedAt)
            json.field("version", post.version)
            json.field("views", post.views)
        }
        // Exactly as long as it needs: the index keeps many.
        self.bytes = Array(unsafeUninitializedCapacity: bytes.count) { buffer, count in
            count = buffer.initialize(fromContentsOf: bytes)
        }
    }

    /// Appends the post's object, with `highlights` as its last key.
    /// - Parameters:
    ///   - content: the `"content":...` field (`ContentCache`).
    ///   - contentHtml: only when asked for.
    func write(
        author: Author, comments: [Comment], likes: Int, content: [UInt8], contentHtml: String?, highlights: Highlights,
        to out: inout [UInt8]
    ) {
        out.append(contentsOf: bytes[..<coverStart])
        var json = JSONWriter(capacity: 256 + comments.count * 256)
        json.field("author", author)
        json.field("comments", comments)
        json.field("commentsCount", comments.count)
        out.append(UInt8(ascii: ","))
        out.append(contentsOf: json.bytes)
        out.append(UInt8(ascii: ","))
        out.append(contentsOf: content)
        if let contentHtml {
            json = JSONWriter(capacity: contentHtml.utf8.count + 32)
            json.field("contentHtml", contentHtml)
            out.append(UInt8(ascii: ","))
            out.append(contentsOf: json.bytes)
        }
        out.append(contentsOf: bytes[coverStart..<publishedStart])
        json = JSONWriter(capacity: 32)
        json.field("likes", likes)
        out.append(UInt8(ascii: ","))
        out.append(contentsOf: json.bytes)
        out.append(contentsOf: bytes[publishedStart...])
        json = JSONWriter(capacity: 256)
        json.field("highlights", highlights)
        out.append(UInt8(ascii: ","))
        out.append(contentsOf: json.bytes)
        out.append(UInt8(ascii: "}"))
    }

    /// The bytes kept, for the memory estimate.
    var size: Int { bytes.count }
}
