import Foundation
import PostlyModels
import PostlyPostgres

extension Comment {
    /// The columns a comment is read from, in the comments service's table and in the
    /// projections of it (where `author_name` and `author_picture` may come from a join).
    public static let columns = "id, post_id, content, author_id, author_name, author_picture, created_at"

    /// A comment from a row with `columns`.
    public init(row: Row) throws {
        self.init(
            id: try row.decode("id", as: String.self), postId: try row.decode("post_id", as: String.self),
            content: try row.decode("content", as: String.self),
            author: Author(
                userId: try row.decode("author_id", as: String.self), name: try row.decode("author_name", as: String.self),
                profilePicture: try row.decode("author_picture", as: String?.self)),
            createdAt: try row.decode("created_at", as: Date.self))
    }
}
