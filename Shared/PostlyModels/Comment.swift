import Foundation

public struct Comment: Codable, Sendable, Hashable {
    public var id: String
    public var postId: String
    public var content: String
    public var author: Author
    public var createdAt: Date
    /// Always 0: the earlier backend's clients decode it; comments have no likes.
    public var likes: Int

    public init(id: String, postId: String, content: String, author: Author, createdAt: Date, likes: Int = 0) {
        self.id = id
        self.postId = postId
        self.content = content
        self.author = author
        self.createdAt = createdAt
        self.likes = likes
    }

    enum CodingKeys: String, CodingKey {
        case id = "_id", postId, content, author, createdAt, likes
    }
}

extension Comment: JSONWritable {
    /// The coded keys, sorted.
    public func write(to json: inout JSONWriter) {
        json.object { json in
            json.field("_id", id)
            json.field("author", author)
            json.field("content", content)
            json.field("createdAt", createdAt)
            json.field("likes", likes)
            json.field("postId", postId)
        }
    }
}
