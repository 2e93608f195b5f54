import Foundation
import PostlyEvents
import PostlyModels
import PostlyPostgres

/// `CommentRepository` on the service's PostgreSQL database.
///
/// Every write locks its post's comment-event sequence (the write unit's `event_sequences`
/// row of the post on `postly.comments`) first; that lock also orders a new comment against
/// the post's deletion, which takes it too before it removes the post's comments.
struct PostgresCommentRepository: CommentRepository {
    let database: Database

    func post(id: String) async throws -> KnownPost? {
        let rows = try await database.query("SELECT id, author_id, title, status, deleted FROM posts WHERE id = \(id)")
        return try rows.first.map(Self.knownPost)
    }

    func comments(postId: String, page: PageRequest?) async throws -> [Comment] {
        let rows: [Row]
        if let page {
            rows = try await database.query(
                """
                SELECT \(unescaped: Comment.columns) FROM comments WHERE post_id = \(postId)
                ORDER BY created_at, id LIMIT \(page.limit) OFFSET \(page.offset)
                """)
        } else {
            rows = try await database.query(
                "SELECT \(unescaped: Comment.columns) FROM comments WHERE post_id = \(postId) ORDER BY created_at, id")
        }
        return try rows.map(Comment.init(row:))
    }

    func profilePicture(userId: String) async throws -> String? {
        try await database.withConnection { try await UsersProjection.profilePicture(of: userId, in: $0) }
    }

    func create(content: String, by author: Author, on post: KnownPost, in transaction: WriteTransaction) async throws -> Comment {
        let connection = transaction.connection
        try await transaction.lockSequence(of: post.id, on: .comments)
        // Under the post's sequence lock: a deletion applied meanwhile is seen here.
        let state = try await connection.query(
            """
            SELECT (SELECT deleted FROM posts WHERE id = \(post.id)) AS deleted,
                   (SELECT max(created_at) FROM comments WHERE post_id = \(post.id)) AS latest
            """)[0]
        if try state.decode("deleted", as: Bool?.self) == true { throw CommentError.postNotFound }
        // Timed under the lock too, and after the post's latest comment, id included: one timed
        // before a wait, or by an instance whose clock runs behind another's, sorted before a
        // comment that committed first, and an offset page showed that one twice.
        let now = Date().inWholeMilliseconds
        let createdAt = try state.decode("latest", as: Date?.self).map { max(now, $0.oneMillisecondLater) } ?? now
        let comment = Comment(id: UUID.timeOrderedString(at: createdAt), postId: post.id, content: content, author: author, createdAt: createdAt)
        try await connection.execute(
            """
            INSERT INTO comments (id, post_id, content, author_id, author_name, author_picture, created_at)
            VALUES (\(comment.id), \(comment.postId), \(comment.content), \(comment.author.userId),
                    \(comment.author.name), \(comment.author.profilePicture), \(comment.createdAt))
            """)
        try await transaction.emit(
            .commentCreated(CommentSnapshot(comment: comment, postTitle: post.title, postAuthorId: post.authorId)),
            key: post.id, actorId: comment.author.userId)
        return comment
    }

    func delete(commentId: String, on post: KnownPost, by userId: String, in transaction: WriteTransaction) async throws {
        let connection = transaction.connection
        try await transaction.lockSequence(of: post.id, on: .comments)
        let rows = try await connection.query(
            "SELECT \(unescaped: Comment.columns) FROM comments WHERE id = \(commentId) AND post_id = \(post.id)")
        guard let row = rows.first else { throw CommentError.commentNotFound }
        let comment = try Comment(row: row)
        guard comment.author.userId == userId || post.authorId == userId else { throw CommentError.notAllowedToDelete }
        try await connection.execute("DELETE FROM comments WHERE id = \(commentId)")
        try await transaction.emit(
            .commentDeleted(CommentSnapshot(comment: comment, postTitle: post.title, postAuthorId: post.authorId)),
            key: post.id, actorId: userId)
    }

    func importComment(_ comment: Comment, on post: KnownPost, in transaction: WriteTransaction) async throws -> ImportResult {
        let connection = transaction.connection
        try await transaction.lockSequence(of: post.id, on: .comments)
        let deleted = try await connection.query("SELECT deleted FROM posts WHERE id = \(post.id)").first?
            .decode("deleted", as: Bool.self)
        if deleted == true { return .rejected(reason: "the post was deleted") }
        // Once in the ledger, always existing: a comment deleted since stays deleted.
        let isNew = try await connection.query("INSERT INTO imported_comments (id) VALUES (\(comment.id)) ON CONFLICT DO NOTHING RETURNING id")
        guard !isNew.isEmpty else { return .existing }
        let inserted = try await connection.query(
            """
            INSERT INTO comments (id, post_id, content, author_id, author_name, author_picture, created_at)
            VALUES (\(comment.id), \(comment.postId), \(comment.content), \(comment.author.userId),
                    \(comment.author.name), \(comment.author.profilePicture), \(comment.createdAt))
            ON CONFLICT (id) DO NOTHING RETURNING id
            """)
        guard !inserted.isEmpty else { return .existing }
        try await transaction.emit(
            .commentCreated(CommentSnapshot(comment: comment, postTitle: post.title, postAuthorId: post.authorId)),
            key: post.id, actorId: comment.author.userId, imported: true)
        return .created
    }

    // MARK: - Rows

    static func knownPost(_ row: Row) throws -> KnownPost {
        KnownPost(
            id: try row.decode("id", as: String.self), authorId: try row.decode("author_id", as: String.self),
            title: try row.decode("title", as: String.self),
            status: PostStatus(rawValue: try row.decode("status", as: String.self)) ?? .draft,
            deleted: try row.decode("deleted", as: Bool.self))
    }
}
