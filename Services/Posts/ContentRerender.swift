import PostlyEvents
import PostlyMarkdown
import PostlyModels
import PostlyPostgres

/// Renders the Markdown of every post that another renderer made (`rendered_by` differs from
/// `Markdown.renderer`: cmark-gfm replaced Ink and a hand-written sanitizer, which broke posts
/// after raw HTML) and stores the result where it differs, with a `post.updated` for each such
/// post so that projections of the excerpt follow. Each post is then marked as made by the
/// current renderer, so a second run reads nothing: the local runner runs it before each start
/// of the service.
///
/// Neither `version` nor `updatedAt` changes: the author changed nothing. Instances running
/// meanwhile are told to drop what their read models hold.
struct ContentRerender {
    let writes: WriteUnit
    let database: Database

    /// How many posts changed.
    func run() async throws -> Int {
        var changed = 0
        var after = ""
        while true {
            // Batches in id order, each its own transaction, so a large table never holds one long lock.
            let (last, changedInBatch) = try await writes.write { transaction -> (String?, Int) in
                let rows = try await transaction.connection.query(
                    """
                    SELECT \(unescaped: PostgresPostRepository.columns) \(unescaped: PostgresPostRepository.from)
                    WHERE p.id > \(after) AND p.rendered_by IS DISTINCT FROM \(Markdown.renderer)
                    ORDER BY p.id LIMIT 100 FOR UPDATE OF p
                    """)
                var changedInBatch = 0
                for var record in try rows.map(PostRecord.init) {
                    let rendering = PostRendering(markdown: record.content)
                    guard rendering.html != record.contentHtml || rendering.excerpt != record.excerpt else { continue }
                    try await transaction.connection.execute(
                        "UPDATE posts SET content_html = \(rendering.html), excerpt = \(rendering.excerpt) WHERE id = \(record.id)")
                    record.contentHtml = rendering.html
                    record.excerpt = rendering.excerpt
                    try await transaction.emit(.postUpdated(record.snapshot(contentText: rendering.text)), key: record.id, actorId: nil)
                    try await ChangeLog.post(record.id, authorId: record.authorId, status: record.status, in: transaction.connection)
                    changedInBatch += 1
                }
                let ids = try rows.map { try $0.decode("id", as: String.self) }
                try await transaction.connection.execute("UPDATE posts SET rendered_by = \(Markdown.renderer) WHERE id = ANY(\(ids))")
                return (ids.last, changedInBatch)
            }
            changed += changedInBatch
            guard let last else { break }
            after = last
        }
        if changed > 0 {
            try await ReadModelSync.tellEveryInstance([.everything], from: "rerender", through: database)
        }
        return changed
    }
}
