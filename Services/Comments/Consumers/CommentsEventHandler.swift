import PostlyEvents
import PostlyModels
import PostlyPostgres

/// Applies `postly.posts` and `postly.users` events to the projection: a post's author,
/// title, status and deletion (a deleted post's comments go with it, each with a
/// `comment.deleted` through the write unit), and users' names and pictures (the shared
/// `UsersProjection`, copied onto their comments). Likes change nothing here.
struct CommentsEventHandler: EventHandler {
    let writes: WriteUnit

    func apply(_ event: Event, in connection: DatabaseConnection) async throws {
        switch event.data {
        case .postCreated(let snapshot), .postUpdated(let snapshot):
            _ = try await Self.applyPost(snapshot.post, deleted: false, sequence: event.sequence, in: connection)
        case .postDeleted(let snapshot):
            try await applyPostDeletion(snapshot.post, sequence: event.sequence, actorId: event.actorId, in: writes.joining(connection))
        case .userRegistered, .userUpdated:
            guard let user = try await UsersProjection.apply(event, in: connection) else { return }
            try await connection.execute(
                """
                UPDATE comments SET author_name = \(user.name), author_picture = \(user.profilePicture)
                WHERE author_id = \(user.userId)
                  AND (author_name IS DISTINCT FROM \(user.name) OR author_picture IS DISTINCT FROM \(user.profilePicture))
                """)
        case .postLiked, .postUnliked, .sessionRevoked, .commentCreated, .commentDeleted:
            break
        }
    }

    /// Stores the post as the event shows it, unless the projection has a newer event of
    /// it. Returns whether it was applied.
    static func applyPost(_ post: Post, deleted: Bool, sequence: Int64, in connection: DatabaseConnection) async throws -> Bool {
        let rows = try await connection.query(
            """
            INSERT INTO posts (id, author_id, title, status, deleted, sequence)
            VALUES (\(post.id), \(post.author.userId), \(post.title), \(post.status.rawValue), \(deleted), \(sequence))
            ON CONFLICT (id) DO UPDATE
            SET author_id = EXCLUDED.author_id, title = EXCLUDED.title, status = EXCLUDED.status,
                deleted = EXCLUDED.deleted, sequence = EXCLUDED.sequence
            WHERE posts.sequence < EXCLUDED.sequence
            RETURNING id
            """)
        return !rows.isEmpty
    }

    /// Marks the post deleted and deletes its comments, each with its `comment.deleted` event.
    private func applyPostDeletion(_ post: Post, sequence: Int64, actorId: String?, in transaction: WriteTransaction) async throws {
        let connection = transaction.connection
        // Taken before the tombstone is written, so a comment being created meanwhile either
        // commits first (and is deleted below) or sees the tombstone.
        try await transaction.lockSequence(of: post.id, on: .comments)
        guard try await Self.applyPost(post, deleted: true, sequence: sequence, in: connection) else { return }
        let comments = try await connection.query(
            """
            DELETE FROM comments WHERE post_id = \(post.id)
            RETURNING \(unescaped: Comment.columns), position
            """
        ).sorted { try $0.decode("position", as: Int64.self) < $1.decode("position", as: Int64.self) }
        for row in comments {
            let comment = try Comment(row: row)
            try await transaction.emit(
                .commentDeleted(CommentSnapshot(comment: comment, postTitle: post.title, postAuthorId: post.author.userId)),
                key: post.id, actorId: actorId)
        }
    }
}
