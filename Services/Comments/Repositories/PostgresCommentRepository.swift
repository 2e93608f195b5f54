import Foundation
import PostlyEvents
import PostlyModels
import PostlyPostgres
import PostlyService

/// `CommentRepository` on the service's PostgreSQL database.
///
/// Every comment event takes the next number of its post's row in `comment_event_sequences`
/// first; that row lock also orders a new comment against the post's deletion, which takes
/// it too before it removes the post's comments.
struct PostgresCommentRepository: CommentRepository {
    let database: Database

    static let producer = "comments"

    func post(id: String) async throws -> KnownPost? {
        let rows = try await database.query("SELECT id, author_id, title, status, deleted FROM posts WHERE id = \(id)")
        return try rows.first.map(Self.knownPost)
    }

    func comments(postId: String, page: PageRequest?) async throws -> [Comment] {
        let rows: [Row]
        if let page {
            rows = try await database.query(
                """
                SELECT \(unescaped: Self.commentColumns) FROM comments WHERE post_id = \(postId)
                ORDER BY created_at, position LIMIT \(page.limit) OFFSET \(page.offset)
                """)
        } else {
            rows = try await database.query(
                "SELECT \(unescaped: Self.commentColumns) FROM comments WHERE post_id = \(postId) ORDER BY created_at, position")
        }
        return try rows.map(Self.comment)
    }

    func profilePicture(userId: String) async throws -> String? {
        try await database.query("SELECT profile_picture FROM users WHERE user_id = \(userId)").first?
            .decode("profile_picture", as: String?.self)
    }

    func idempotentAnswer(userId: String, key: String) async throws -> IdempotentAnswer? {
        let rows = try await database.query(
            """
            SELECT post_id, content, response FROM idempotency_keys
            WHERE user_id = \(userId) AND key = \(key) AND created_at > now() - interval '24 hours'
            """)
        guard let row = rows.first else { return nil }
        let comment = try Self.decoder.decode(Comment.self, from: Data(try row.decode("response", as: String.self).utf8))
        return IdempotentAnswer(
            postId: try row.decode("post_id", as: String.self), requestContent: try row.decode("content", as: String.self),
            comment: comment)
    }

    func create(_ comment: Comment, on post: KnownPost, idempotencyKey: String?, requestContent: String) async throws -> CreateOutcome {
        do {
            return try await database.transaction { connection in
                if let idempotencyKey {
                    let response = String(decoding: try Self.encoder.encode(comment), as: UTF8.self)
                    // A concurrent request with the same key waits here for the first one's
                    // commit and then finds the key taken; an expired key is taken over.
                    let taken = try await connection.query(
                        """
                        INSERT INTO idempotency_keys (user_id, key, post_id, content, response)
                        VALUES (\(comment.author.userId), \(idempotencyKey), \(post.id), \(requestContent), \(response))
                        ON CONFLICT (user_id, key) DO UPDATE
                        SET post_id = EXCLUDED.post_id, content = EXCLUDED.content, response = EXCLUDED.response, created_at = now()
                        WHERE idempotency_keys.created_at <= now() - interval '24 hours'
                        RETURNING key
                        """)
                    guard !taken.isEmpty else { throw KeyTaken() }
                }
                let sequence = try await Self.nextEventSequence(postId: post.id, in: connection)
                // Under the post's sequence lock: a deletion applied meanwhile is seen here.
                let deleted = try await connection.query("SELECT deleted FROM posts WHERE id = \(post.id)").first?
                    .decode("deleted", as: Bool.self)
                if deleted == true { throw APIError.notFound("Post not found") }
                try await connection.execute(
                    """
                    INSERT INTO comments (id, post_id, content, author_id, author_name, author_picture, created_at)
                    VALUES (\(comment.id), \(comment.postId), \(comment.content), \(comment.author.userId),
                            \(comment.author.name), \(comment.author.profilePicture), \(comment.createdAt))
                    """)
                try await Self.emit(
                    .commentCreated(CommentSnapshot(comment: comment, postTitle: post.title, postAuthorId: post.authorId)),
                    sequence: sequence, postId: post.id, actorId: comment.author.userId, in: connection)
                return .created(comment)
            }
        } catch is KeyTaken {
            return .keyTaken
        }
    }

    func delete(commentId: String, on post: KnownPost, by userId: String) async throws {
        try await database.transaction { connection in
            let sequence = try await Self.nextEventSequence(postId: post.id, in: connection)
            let rows = try await connection.query(
                "SELECT \(unescaped: Self.commentColumns) FROM comments WHERE id = \(commentId) AND post_id = \(post.id)")
            guard let row = rows.first else { throw APIError.notFound("Comment not found") }
            let comment = try Self.comment(row)
            guard comment.author.userId == userId || post.authorId == userId else {
                throw APIError.forbidden("Only the comment's author or the post's author may delete it")
            }
            try await connection.execute("DELETE FROM comments WHERE id = \(commentId)")
            try await Self.emit(
                .commentDeleted(CommentSnapshot(comment: comment, postTitle: post.title, postAuthorId: post.authorId)),
                sequence: sequence, postId: post.id, actorId: userId, in: connection)
        }
    }

    struct KeyTaken: Error {}

    // MARK: - The projection, applied by `CommentsEventHandler` in the runner's transaction

    /// Stores the post as the event shows it, unless the projection has a newer event of
    /// it. Returns whether it was applied.
    static func applyPost(_ snapshot: PostSnapshot, deleted: Bool, sequence: Int64, in connection: DatabaseConnection) async throws -> Bool {
        let rows = try await connection.query(
            """
            INSERT INTO posts (id, author_id, title, status, deleted, sequence)
            VALUES (\(snapshot.id), \(snapshot.author.userId), \(snapshot.title), \(snapshot.status.rawValue), \(deleted), \(sequence))
            ON CONFLICT (id) DO UPDATE
            SET author_id = EXCLUDED.author_id, title = EXCLUDED.title, status = EXCLUDED.status,
                deleted = EXCLUDED.deleted, sequence = EXCLUDED.sequence
            WHERE posts.sequence < EXCLUDED.sequence
            RETURNING id
            """)
        return !rows.isEmpty
    }

    /// Marks the post deleted and deletes its comments, each with its `comment.deleted` event.
    /// Returns whether the event was newer than what the projection had.
    static func applyPostDeletion(_ snapshot: PostSnapshot, sequence: Int64, actorId: String?, in connection: DatabaseConnection) async throws -> Bool {
        // Taken before the tombstone is written, so a comment being created meanwhile either
        // commits first (and is deleted below) or sees the tombstone.
        try await connection.execute(
            """
            INSERT INTO comment_event_sequences (post_id, sequence) VALUES (\(snapshot.id), 0)
            ON CONFLICT (post_id) DO UPDATE SET sequence = comment_event_sequences.sequence
            """)
        guard try await applyPost(snapshot, deleted: true, sequence: sequence, in: connection) else { return false }
        let comments = try await connection.query(
            """
            DELETE FROM comments WHERE post_id = \(snapshot.id)
            RETURNING \(unescaped: commentColumns), position
            """
        ).sorted { try $0.decode("position", as: Int64.self) < $1.decode("position", as: Int64.self) }
        for row in comments {
            let comment = try Self.comment(row)
            let next = try await nextEventSequence(postId: snapshot.id, in: connection)
            try await emit(
                .commentDeleted(CommentSnapshot(comment: comment, postTitle: snapshot.title, postAuthorId: snapshot.author.userId)),
                sequence: next, postId: snapshot.id, actorId: actorId, in: connection)
        }
        return true
    }

    /// Keeps the user's name and picture on their comments current.
    static func applyUser(_ user: UserSnapshot, in connection: DatabaseConnection) async throws {
        try await connection.execute(
            """
            INSERT INTO users (user_id, name, profile_picture) VALUES (\(user.userId), \(user.name), \(user.profilePicture))
            ON CONFLICT (user_id) DO UPDATE SET name = EXCLUDED.name, profile_picture = EXCLUDED.profile_picture
            """)
        try await connection.execute(
            """
            UPDATE comments SET author_name = \(user.name), author_picture = \(user.profilePicture)
            WHERE author_id = \(user.userId)
              AND (author_name IS DISTINCT FROM \(user.name) OR author_picture IS DISTINCT FROM \(user.profilePicture))
            """)
    }

    // MARK: - Helpers

    /// The next sequence of the post's comment events; holds the post's row until commit.
    static func nextEventSequence(postId: String, in connection: DatabaseConnection) async throws -> Int64 {
        try await connection.query(
            """
            INSERT INTO comment_event_sequences (post_id, sequence) VALUES (\(postId), 1)
            ON CONFLICT (post_id) DO UPDATE SET sequence = comment_event_sequences.sequence + 1
            RETURNING sequence
            """)[0].decode("sequence", as: Int64.self)
    }

    static func emit(_ data: EventData, sequence: Int64, postId: String, actorId: String?, in connection: DatabaseConnection) async throws {
        try await Outbox.add(Event(producer: producer, key: postId, sequence: sequence, actorId: actorId, data: data), in: connection)
    }

    static let commentColumns = "id, post_id, content, author_id, author_name, author_picture, created_at"

    static func comment(_ row: Row) throws -> Comment {
        Comment(
            id: try row.decode("id", as: String.self), postId: try row.decode("post_id", as: String.self),
            content: try row.decode("content", as: String.self),
            author: Author(
                userId: try row.decode("author_id", as: String.self), name: try row.decode("author_name", as: String.self),
                profilePicture: try row.decode("author_picture", as: String?.self)),
            createdAt: try row.decode("created_at", as: Date.self))
    }

    static func knownPost(_ row: Row) throws -> KnownPost {
        KnownPost(
            id: try row.decode("id", as: String.self), authorId: try row.decode("author_id", as: String.self),
            title: try row.decode("title", as: String.self),
            status: PostStatus(rawValue: try row.decode("status", as: String.self)) ?? .draft,
            deleted: try row.decode("deleted", as: Bool.self))
    }

    private static let encoder = PostlyJSON.encoder()
    private static let decoder = PostlyJSON.decoder()
}
