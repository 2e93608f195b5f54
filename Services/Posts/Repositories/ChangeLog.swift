import PostlyModels
import PostlyPostgres

/// The change feed's log (`changes`), written in the transaction of each change it records:
/// every post, comment and author once, at its last change. An upsert takes the row to the
/// end of the log, at the writing transaction's id (`txid`) and a fresh `seq`, which is the
/// order `ChangeFeed` reads it in. Views and likes are not changes of the feed (they would
/// flood it).
enum ChangeLog {
    /// The commit signal of a recorded change: what wakes the feed's long polls here.
    static let channel = "postly_changes"

    /// Who may see an entry: everyone, the author alone (a draft or scheduled post), or nobody
    /// but as a tombstone (deleted).
    enum Visibility: String, Sendable {
        case `public`, `private`, gone

        init(_ status: PostStatus?) {
            switch status {
            case .published?: self = .public
            case .draft?, .scheduled?: self = .private
            case nil: self = .gone
            }
        }
    }

    /// Posts as they are now: their status, or nil when deleted.
    static func posts(_ posts: [(id: String, authorId: String, status: PostStatus?)], in connection: DatabaseConnection) async throws {
        try await record(
            kind: "post", ids: posts.map(\.id), postIds: posts.map(\.id), authorIds: posts.map(\.authorId),
            visibilities: posts.map { Visibility($0.status) }, in: connection)
    }

    static func post(_ id: String, authorId: String, status: PostStatus?, in connection: DatabaseConnection) async throws {
        try await posts([(id, authorId, status)], in: connection)
        // A deleted post's tombstone covers its comments: their entries go with it.
        if status == nil { try await connection.execute("DELETE FROM changes WHERE kind = 'comment' AND post_id = \(id)") }
    }

    /// A comment written or deleted (its visibility otherwise follows its post's).
    static func comment(_ id: String, postId: String, authorId: String, deleted: Bool, in connection: DatabaseConnection) async throws {
        try await record(kind: "comment", ids: [id], postIds: [postId], authorIds: [authorId], visibilities: [deleted ? .gone : .public], in: connection)
    }

    /// An author's name or picture changed.
    static func author(_ userId: String, in connection: DatabaseConnection) async throws {
        try await record(kind: "author", ids: [userId], postIds: [""], authorIds: [userId], visibilities: [.public], in: connection)
    }

    private static func record(
        kind: String, ids: [String], postIds: [String], authorIds: [String], visibilities: [Visibility], in connection: DatabaseConnection
    ) async throws {
        guard !ids.isEmpty else { return }
        // In id order, so two writes of the same entries never wait for each other in a cycle.
        try await connection.executeLater(
            """
            INSERT INTO changes (kind, id, post_id, author_id, visibility, ever_public)
            SELECT \(kind), c.id, NULLIF(c.post_id, ''), c.author_id, c.visibility, c.visibility = 'public'
            FROM unnest(\(ids)::text[], \(postIds)::text[], \(authorIds)::text[], \(visibilities.map(\.rawValue))::text[])
                AS c(id, post_id, author_id, visibility)
            ORDER BY c.id
            ON CONFLICT (kind, id) DO UPDATE SET post_id = EXCLUDED.post_id, author_id = EXCLUDED.author_id,
                visibility = EXCLUDED.visibility, ever_public = changes.ever_public OR EXCLUDED.ever_public,
                txid = pg_current_xact_id(), seq = nextval('changes_seq'), changed_at = now()
            """)
        connection.signalAfterCommit(channel)
    }
}
