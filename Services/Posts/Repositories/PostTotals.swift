import PostlyModels
import PostlyPostgres

/// How many posts each list holds (`post_totals`), kept by the writes in their own
/// transaction, so reading a total costs the same however many posts there are. A write moves
/// its totals last: their rows are shared by every write to a list and stay locked until the
/// commit, so taken earlier they made concurrent creates wait for each other's whole
/// transaction (45 % of PostgreSQL's time in a create load was that wait).
enum PostTotals {
    /// Concurrent writes to one list add to different rows, so few wait for another's commit.
    static let slots = 16

    /// A post of `authorId` leaving the lists of `before` for those of `after` (nil: none, for a
    /// created or deleted post).
    struct Move: Sendable {
        var authorId: String
        var before: PostStatus?
        var after: PostStatus?
    }

    /// Moves a post of `authorId` out of the lists of `before` and into those of `after`.
    static func move(authorId: String, from before: PostStatus?, to after: PostStatus?, in connection: DatabaseConnection) async throws {
        try await move([Move(authorId: authorId, before: before, after: after)], in: connection)
    }

    /// Makes `moves` in one statement, on one slot. Every author's lists are `author_id` ''.
    static func move(_ moves: [Move], in connection: DatabaseConnection) async throws {
        var deltas: [String: [String: Int]] = [:]
        for move in moves where move.before != move.after {
            for (status, posts) in [(move.before, -1), (move.after, 1)] {
                guard let status else { continue }
                for authorId in ["", move.authorId] { deltas[authorId, default: [:]][status.rawValue, default: 0] += posts }
            }
        }
        // One order for the rows every write locks, so two writes never deadlock on them.
        let changes = deltas.flatMap { authorId, statuses in statuses.map { (authorId: authorId, status: $0.key, posts: $0.value) } }
            .filter { $0.posts != 0 }
            .sorted { ($0.authorId, $0.status) < ($1.authorId, $1.status) }
        guard !changes.isEmpty else { return }
        try await connection.executeLater(
            """
            INSERT INTO post_totals (author_id, status, slot, posts)
            SELECT author_id, status, \(Int.random(in: 0..<slots)), posts
            FROM unnest(\(changes.map(\.authorId))::text[], \(changes.map(\.status))::text[], \(changes.map(\.posts))::bigint[])
                AS change(author_id, status, posts)
            ON CONFLICT (author_id, status, slot) DO UPDATE SET posts = post_totals.posts + excluded.posts
            """)
    }

    /// The number of posts in the list `filter` describes: the sum of at most 16 rows a status.
    static func total(of filter: PostFilter, in connection: DatabaseConnection) async throws -> Int {
        let authorId = filter.authorId ?? ""
        let rows = if let status = filter.status {
            try await connection.query(
                "SELECT COALESCE(sum(posts), 0)::bigint AS total FROM post_totals WHERE author_id = \(authorId) AND status = \(status.rawValue)")
        } else {
            try await connection.query("SELECT COALESCE(sum(posts), 0)::bigint AS total FROM post_totals WHERE author_id = \(authorId)")
        }
        return try rows.first?.decode("total", as: Int.self) ?? 0
    }
}
