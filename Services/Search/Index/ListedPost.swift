import PostlyModels

/// A post's JSON as lists show it, written once when the post is indexed: what a search adds
/// or keeps current itself (the author's name and picture, the comments, the likes) is written
/// into the gaps for each answer. The content is kept here as JSON although the index keeps it
/// split too (`IndexedText`, for excerpts): writing 20 contents from their tokens was over a third
/// of a search's CPU (a profile at 10,000 posts); their bytes are about half a post's memory.
/// `contentHtml` is not kept (read for the page when asked for): few ask for it. The keys are
/// `Post.writeFields`' keys in the same sorted order.
struct ListedPost: Sendable, Equatable {
    /// `{"_id":...` | `,"content":...` | `,"coverImage":...,"createdAt":...,"excerpt":...` |
    /// `,"publishAt":...,"views":...`
    private let bytes: [UInt8]
    private let contentStart: Int
    private let coverStart: Int
    private let publishedStart: Int

    init(_ post: Post) {
        var bytes: [UInt8] = [UInt8(ascii: "{")]
        bytes.reserveCapacity(post.content.utf8.count + 512)
        func append(_ write: (inout JSONWriter) -> Void) {
            var json = JSONWriter(capacity: 64)
            write(&json)
            if bytes.count > 1 { bytes.append(UInt8(ascii: ",")) }
            bytes.append(contentsOf: json.bytes)
        }
        append { $0.field("_id", post.id) }
        contentStart = bytes.count
        append { $0.field("content", post.content) }
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
    /// - Parameter contentHtml: only when asked for.
    func write(author: Author, comments: [Comment], likes: Int, contentHtml: String?, highlights: Highlights, to out: inout [UInt8]) {
        out.append(contentsOf: bytes[..<contentStart])
        var json = JSONWriter(capacity: 256 + comments.count * 256)
        json.field("author", author)
        json.field("comments", comments)
        json.field("commentsCount", comments.count)
        out.append(UInt8(ascii: ","))
        out.append(contentsOf: json.bytes)
        out.append(contentsOf: bytes[contentStart..<coverStart])
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
