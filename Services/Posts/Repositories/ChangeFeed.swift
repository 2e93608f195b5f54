import Foundation
import Logging
import PostlyEvents
import PostlyModels
import PostlyPostgres

/// One entry of the change feed: an entity at its latest state, or its tombstone.
struct ChangeEntry: Encodable, Sendable {
    enum Kind: String, Sendable { case post, comment, author }

    var kind: Kind
    var id: String
    var changedAt: Date
    var postId: String?
    /// "deleted" or "unpublished" on a post's tombstone.
    var reason: String?
    var post: Post?
    var comment: Comment?
    var author: Author?
    var deleted: Bool { post == nil && comment == nil && author == nil }

    enum CodingKeys: String, CodingKey {
        case kind, id, changedAt, postId, deleted, reason, post, comment, author
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(kind.rawValue, forKey: .kind)
        try container.encode(id, forKey: .id)
        try container.encode(changedAt, forKey: .changedAt)
        try container.encodeIfPresent(postId, forKey: .postId)
        try container.encode(deleted, forKey: .deleted)
        try container.encodeIfPresent(reason, forKey: .reason)
        try container.encodeIfPresent(post, forKey: .post)
        try container.encodeIfPresent(comment, forKey: .comment)
        try container.encodeIfPresent(author, forKey: .author)
    }

    /// About how many bytes it takes in a page, its texts as JSON writes them: an escaped byte
    /// takes up to six (a page of posts of control characters went out at twice its cap).
    var estimatedBytes: Int {
        256 + (post.map(ReadModel.estimatedBytes(of:)) ?? 0) + (comment?.content.utf8.count ?? 0) + escapes
    }

    /// How many bytes its texts' escapes add.
    private var escapes: Int {
        let texts = [post?.title, post?.content, post?.contentHtml, post?.excerpt, comment?.content] + (post?.comments.map(\.content) ?? [])
        return texts.reduce(0) { sum, text in (text ?? "").utf8.reduce(sum) { $0 + JSONWriter.writtenLength($1) - 1 } }
    }
}

/// A page of the change feed: its entries, where the next page starts, and whether one is
/// waiting already.
struct ChangePage: Encodable, Sendable {
    var changes: [ChangeEntry]
    var next: String
    var more: Bool
}

/// A page holds up to 500 whole posts: written by `JSONWriter`, in the bytes `encode(to:)`
/// gives through `PostlyJSON.encoder()` (sorted keys); a 100-post page went from 91-107 to
/// 131-161 a second.
extension ChangePage: JSONWritable {
    func write(to json: inout JSONWriter) {
        json.object { json in
            json.field("changes", changes)
            json.field("more", more)
            json.field("next", next)
        }
    }
}

extension ChangeEntry: JSONWritable {
    func write(to json: inout JSONWriter) {
        json.object { json in
            if let author { json.field("author", author) }
            json.field("changedAt", changedAt)
            if let comment { json.field("comment", comment) }
            json.field("deleted", deleted)
            json.field("id", id)
            json.field("kind", kind.rawValue)
            if let post { json.field("post", post) }
            if let postId { json.field("postId", postId) }
            if let reason { json.field("reason", reason) }
        }
    }
}

/// Why a cursor cannot be read from.
enum ChangeFeedError: Error, Sendable, Hashable {
    /// Of another epoch (the log was restored), or before the last tombstone purged and given
    /// out before that purge: the client may have missed a change and must resync.
    case expired
}

/// The change feed read from the log (`ChangeLog`), for one reader.
///
/// Order is (`txid`, `seq`), and only entries whose transaction id is below the snapshot's
/// `xmin` are read: every transaction below it has ended, and one that may still commit has an
/// id at or above it, so above every cursor handed out: no change that commits late is
/// skipped (a sequence alone can be: a later number may commit first). A long transaction
/// delays the feed; it never breaks it.
struct ChangeFeed: Sendable {
    let database: Database
    let logger: Logger
    /// A page holds at most this many bytes of entries (and at least one entry).
    static let pageBytes = 4 << 20

    /// The entries after `cursor` (nil: from the start, for a resync) that `viewer` may see:
    /// public entries; a draft's or scheduled post's only to its author, and to others a
    /// tombstone if it was ever public; a deleted post's tombstone to its author and, if it
    /// was ever public, to all; comments while their post is visible to the reader.
    func page(after cursor: ChangeCursor?, viewer: String?, limit: Int) async throws -> ChangePage {
        try await database.transaction(isolation: .repeatableRead) { connection in
            let meta = try await Self.meta(in: connection)
            let start: ChangeCursor
            if let cursor {
                // A cursor past every transaction given out is of this log before a restore to an
                // earlier point in time: the ids it has read past are given out again. One before
                // the horizon may have missed a tombstone purged since it was given out; one given
                // out since the last purge missed none (a resync's pages lie before the horizon).
                guard cursor.epoch == meta.epoch, cursor.txid < meta.unissued, !cursor.precedes(meta.horizon) || cursor.purges == meta.purges
                else {
                    throw ChangeFeedError.expired
                }
                start = cursor
            } else {
                start = meta.cursor(txid: 0, seq: 0)
            }
            var rows = try await connection.query(
                """
                SELECT c.kind, c.id, c.post_id, c.author_id, c.visibility, c.ever_public, c.txid::text AS txid, c.seq, c.changed_at
                FROM changes c
                LEFT JOIN changes p ON c.kind = 'comment' AND p.kind = 'post' AND p.id = c.post_id
                WHERE (c.txid, c.seq) > (\(String(start.txid))::xid8, \(start.seq))
                  AND c.txid < pg_snapshot_xmin(pg_current_snapshot())
                  AND CASE c.kind
                      WHEN 'post' THEN c.visibility = 'public' OR c.ever_public OR c.author_id = \(viewer)
                      WHEN 'comment' THEN p.visibility = 'public' OR (p.visibility = 'private' AND p.author_id = \(viewer))
                      -- An author once they have written something public, and to themselves: every
                      -- account's name and picture was anyone's to list. A scalar subquery, probed
                      -- per row: as EXISTS, the generic plan hashed every public row of the log.
                      ELSE c.id = \(viewer) OR (
                          SELECT true FROM changes w WHERE w.author_id = c.id AND w.kind IN ('post', 'comment') AND w.ever_public LIMIT 1)
                      END
                ORDER BY c.txid, c.seq
                LIMIT \(limit)
                """
            ).map(Row.init)
            var more = rows.count == limit
            let fitting = try await Self.fitting(rows, viewer: viewer, in: connection)
            if fitting < rows.count {
                rows.removeSubrange(fitting...)
                more = true
            }
            var entries = try await Self.entries(rows, meta: meta, viewer: viewer, in: connection)
            var next = rows.last.map { meta.cursor(txid: $0.txid, seq: $0.seq) } ?? meta.cursor(txid: start.txid, seq: start.seq)
            // At most `pageBytes`, but at least one entry (their texts' sizes were an estimate).
            var bytes = 0
            let cut = entries.firstIndex { bytes += $0.entry.estimatedBytes; return bytes > Self.pageBytes }.map { max($0, 1) }
            if let cut, cut < entries.count {
                next = entries[cut - 1].cursor
                entries.removeSubrange(cut...)
                more = true
            }
            if !more {
                // Past what this reader may not see, so the next call does not read it again.
                let frontier = try await Self.frontier(meta, in: connection)
                if next.precedes(frontier) { next = frontier }
            }
            return ChangePage(changes: entries.map(\.entry), next: next.token, more: more)
        }
    }

    /// The log's rows after `start`, up to `end` (a frontier), oldest first, at most `limit`,
    /// whoever may see them: what changed in between. Ordered by the column, as `page` is (the
    /// text alias would sort "9" after "10").
    func rows(after start: ChangeCursor, upTo end: ChangeCursor, limit: Int) async throws -> [Row] {
        try await database.query(
            """
            SELECT c.kind, c.id, c.post_id, c.author_id, c.visibility, c.ever_public, c.txid::text AS txid, c.seq, c.changed_at
            FROM changes c
            WHERE (c.txid, c.seq) > (\(String(start.txid))::xid8, \(start.seq)) AND (c.txid, c.seq) <= (\(String(end.txid))::xid8, \(end.seq))
            ORDER BY c.txid, c.seq LIMIT \(limit)
            """
        ).map(Row.init)
    }

    /// The cursor of now (`since=now`): after every change that can be read now.
    func now() async throws -> ChangeCursor {
        try await database.transaction(isolation: .repeatableRead) { connection in
            try await Self.frontier(Self.meta(in: connection), in: connection)
        }
    }

    /// Deletes tombstones changed before `cutoff`, and moves the horizon past them: a cursor
    /// before it may have missed one (410, the client resyncs). How many went.
    @discardableResult
    func purgeTombstones(before cutoff: Date) async throws -> Int {
        try await database.transaction { connection in
            let purged = try await connection.query(
                """
                DELETE FROM changes WHERE visibility = 'gone' AND changed_at < \(cutoff)
                RETURNING txid::text AS txid, seq
                """
            ).map { (txid: UInt64(try $0.decode("txid", as: String.self)) ?? 0, seq: try $0.decode("seq", as: Int64.self)) }
            guard let last = purged.max(by: { ($0.txid, $0.seq) < ($1.txid, $1.seq) }) else { return 0 }
            try await connection.execute(
                """
                UPDATE changes_meta SET horizon_txid = \(String(last.txid))::xid8, horizon_seq = \(last.seq)
                WHERE (horizon_txid, horizon_seq) < (\(String(last.txid))::xid8, \(last.seq))
                """)
            try await connection.execute("UPDATE changes_meta SET purges = purges + 1")
            return purged.count
        }
    }

    /// At start: a log whose transaction ids are not all below the database's current one was
    /// restored into another cluster (a logical restore); its cursors mean nothing there. Its
    /// entries move to this transaction, and a new epoch makes every cursor answer 410.
    func checkEpoch() async throws {
        try await database.transaction { connection in
            let restored = try await connection.query(
                "SELECT EXISTS (SELECT 1 FROM changes WHERE txid >= pg_current_xact_id()) AS restored"
            ).first?.decode("restored", as: Bool.self) ?? false
            guard restored else { return }
            try await connection.execute("UPDATE changes SET txid = pg_current_xact_id()")
            try await connection.execute(
                "UPDATE changes_meta SET epoch = md5(random()::text || clock_timestamp()::text), horizon_txid = '0', horizon_seq = 0")
            logger.warning("the change feed's log comes from another database cluster (a restore): new epoch, every client resyncs")
        }
    }

    // MARK: - Reading

    /// A row of the log.
    struct Row {
        var kind: ChangeEntry.Kind
        var id: String
        var postId: String?
        var authorId: String
        var visibility: ChangeLog.Visibility
        var everPublic: Bool
        var txid: UInt64
        var seq: Int64
        var changedAt: Date

        init(_ row: PostlyPostgres.Row) throws {
            guard let kind = ChangeEntry.Kind(rawValue: try row.decode("kind")),
                  let visibility = ChangeLog.Visibility(rawValue: try row.decode("visibility")),
                  let txid = UInt64(try row.decode("txid", as: String.self))
            else { throw DatabaseError.decoding(column: "kind", reason: "unknown change") }
            self.kind = kind
            self.visibility = visibility
            self.txid = txid
            id = try row.decode("id")
            postId = try row.decode("post_id")
            authorId = try row.decode("author_id")
            everPublic = try row.decode("ever_public")
            seq = try row.decode("seq")
            changedAt = try row.decode("changed_at")
        }
    }

    /// The log as a cursor given out now finds it.
    struct Meta {
        var epoch: String
        /// How many purges deleted tombstones.
        var purges: Int64
        /// After the last tombstone purged.
        var horizon: ChangeCursor
        /// The first transaction id not yet given out.
        var unissued: UInt64

        func cursor(txid: UInt64, seq: Int64) -> ChangeCursor {
            ChangeCursor(epoch: epoch, txid: txid, seq: seq, purges: purges)
        }
    }

    private static func meta(in connection: DatabaseConnection) async throws -> Meta {
        guard
            let row = try await connection.query(
                """
                SELECT epoch, purges, horizon_txid::text AS txid, horizon_seq, pg_snapshot_xmax(pg_current_snapshot())::text AS unissued
                FROM changes_meta
                """
            ).first
        else {
            throw DatabaseError.decoding(column: "epoch", reason: "no change feed epoch")
        }
        let epoch: String = try row.decode("epoch")
        let horizon = ChangeCursor(epoch: epoch, txid: UInt64(try row.decode("txid", as: String.self)) ?? 0, seq: try row.decode("horizon_seq"))
        return Meta(
            epoch: epoch, purges: try row.decode("purges"), horizon: horizon,
            unissued: UInt64(try row.decode("unissued", as: String.self)) ?? .max)
    }

    /// After the last entry anyone can read now (the start when there is none). The text form
    /// has a name of its own: `ORDER BY txid` would otherwise sort by it ("9" after "10") and
    /// read the whole log to do so.
    private static func frontier(_ meta: Meta, in connection: DatabaseConnection) async throws -> ChangeCursor {
        let last = try await connection.query(
            """
            SELECT txid::text AS last_txid, seq FROM changes WHERE txid < pg_snapshot_xmin(pg_current_snapshot())
            ORDER BY txid DESC, seq DESC LIMIT 1
            """
        ).first
        guard let last else { return meta.cursor(txid: 0, seq: 0) }
        return meta.cursor(txid: UInt64(try last.decode("last_txid", as: String.self)) ?? 0, seq: try last.decode("seq"))
    }

    /// How many of `rows`, from the first, fit in a page by their texts' sizes (at least
    /// one), known before the texts are read: 500 posts of a megabyte were read whole, half a
    /// gigabyte for anyone's one request, and then cut. The sizes come from the values'
    /// headers, without reading them.
    static func fitting(_ rows: [Row], viewer: String?, in connection: DatabaseConnection) async throws -> Int {
        let postIds = rows.filter { Self.showsPost($0, to: viewer) }.map(\.id)
        let commentIds = rows.filter(Self.showsComment).map(\.id)
        guard !postIds.isEmpty || !commentIds.isEmpty else { return rows.count }
        var sizes: [String: Int] = [:]
        for row in try await connection.query(
            """
            SELECT 'post:' || p.id AS key, octet_length(p.title) + octet_length(p.content) + coalesce(octet_length(p.content_html), 0)
                + octet_length(p.excerpt) + coalesce((SELECT sum(300 + octet_length(c.content)) FROM comments c WHERE c.post_id = p.id), 0) AS bytes
            FROM posts p WHERE p.id = ANY(\(postIds))
            UNION ALL
            SELECT 'comment:' || id, octet_length(content) FROM comments WHERE id = ANY(\(commentIds))
            """
        ) {
            sizes[try row.decode("key", as: String.self)] = try row.decode("bytes", as: Int.self)
        }
        var bytes = 0
        for (index, row) in rows.enumerated() {
            bytes += 256 + (sizes["\(row.kind.rawValue):\(row.id)"] ?? 0)
            if bytes > pageBytes { return max(index, 1) }
        }
        return rows.count
    }

    /// Whether a row's entry carries its post (to others, a draft is a tombstone).
    private static func showsPost(_ row: Row, to viewer: String?) -> Bool {
        row.kind == .post && (row.visibility == .public || (row.visibility == .private && row.authorId == viewer))
    }

    private static func showsComment(_ row: Row) -> Bool {
        row.kind == .comment && row.visibility != .gone
    }

    /// The rows as entries for `viewer`, each with the cursor after it; rows whose entity is
    /// gone meanwhile (in this snapshot) are left out.
    private static func entries(_ rows: [Row], meta: Meta, viewer: String?, in connection: DatabaseConnection) async throws -> [(entry: ChangeEntry, cursor: ChangeCursor)] {
        let shownPostIds = rows.filter { Self.showsPost($0, to: viewer) }.map(\.id)
        let commentIds = rows.filter(Self.showsComment).map(\.id)
        let authorIds = rows.filter { $0.kind == .author }.map(\.id)
        var posts: [String: Post] = [:]
        if !shownPostIds.isEmpty {
            let records = try await connection.query(
                "SELECT \(unescaped: PostgresPostRepository.columns) \(unescaped: PostgresPostRepository.from) WHERE p.id = ANY(\(shownPostIds))"
            ).map(PostRecord.init)
            for post in try await PostgresPostRepository.posts(records, in: connection) { posts[post.id] = post }
        }
        var comments: [String: Comment] = [:]
        if !commentIds.isEmpty {
            let rows = try await connection.query(
                """
                SELECT c.id, c.post_id, c.content, c.author_id, COALESCE(u.name, c.author_name) AS author_name,
                       CASE WHEN u.user_id IS NULL THEN c.author_picture ELSE u.profile_picture END AS author_picture, c.created_at
                FROM comments c LEFT JOIN users u ON u.user_id = c.author_id WHERE c.id = ANY(\(commentIds))
                """)
            for row in rows {
                let comment = try Comment(row: row)
                comments[comment.id] = comment
            }
        }
        var authors: [String: Author] = [:]
        if !authorIds.isEmpty {
            for row in try await connection.query("SELECT user_id, name, profile_picture FROM users WHERE user_id = ANY(\(authorIds))") {
                let author = Author(userId: try row.decode("user_id"), name: try row.decode("name"), profilePicture: try row.decode("profile_picture"))
                authors[author.userId] = author
            }
        }
        return rows.compactMap { row in
            var entry = ChangeEntry(kind: row.kind, id: row.id, changedAt: row.changedAt)
            switch (row.kind, row.visibility) {
            case (.post, .gone):
                entry.reason = "deleted"
            case (.post, _):
                if let post = posts[row.id] {
                    entry.post = post
                } else if row.visibility == .private {
                    entry.reason = "unpublished"
                } else {
                    return nil
                }
            case (.comment, let visibility):
                entry.postId = row.postId
                if visibility != .gone {
                    guard let comment = comments[row.id] else { return nil }
                    entry.comment = comment
                }
            case (.author, _):
                guard let author = authors[row.id] else { return nil }
                entry.author = author
            }
            return (entry, meta.cursor(txid: row.txid, seq: row.seq))
        }
    }
}
