import Foundation
import PostlyEvents
import PostlyModels
import PostlyPostgres

/// Search results written from the service's tables rather than from the index in memory: the
/// post as its events carried it, its author and comments as search keeps them, and its
/// highlights made from the words the indexer stored for its title and content (`SplitText`),
/// the excerpt around the first matched word (`search_positions`): no text is parsed again.
/// `PostgresSearchRepository` writes every result so; `MemorySearchRepository` a post edited
/// since the index listed it, so that no result mixes two versions of a post.
enum StoredResults {
    private static let decoder = PostlyJSON.decoder()

    /// The results of the published posts among `ids`, by id.
    /// - Parameter matched: the lexemes the search looked for, which the highlights mark.
    static func read(
        _ ids: [String], matched: [String], includeHTML: Bool, in connection: DatabaseConnection
    ) async throws -> [String: SearchResult] {
        guard !ids.isEmpty else { return [:] }
        let rows = try await connection.query(
            """
            SELECT d.id, (CASE WHEN \(includeHTML) THEN d.post ELSE d.post - 'contentHtml' END)::text AS post,
                   d.likes, a.name AS author_name, a.profile_picture AS author_picture, d.title_tokens, d.title_lexemes,
                   d.content_tokens[2 * around.first_word - 1 : 2 * around.last_word + 1] AS excerpt_tokens,
                   d.content_lexemes[around.first_word : around.last_word] AS excerpt_lexemes
            FROM documents d JOIN authors a ON a.user_id = d.author_id
            -- The words the excerpt can show: around the first match, else the first ones.
            -- The first match is looked up among the matched lexemes' first positions.
            CROSS JOIN LATERAL (
                SELECT coalesce(greatest(first_match - \(SplitText.wordsBeforeMatch), 1), 1) AS first_word,
                       coalesce(first_match + \(SplitText.wordsAfterMatch), \(SplitText.excerptMinWords)) AS last_word
                FROM (SELECT min(p.positions[1]) AS first_match
                      FROM unnest(ts_filter(setweight(search_positions(d.content_lexemes), 'A', \(matched)::text[]), '{a}')) AS p
                ) AS first
            ) AS around
            WHERE d.id = ANY(\(ids)) AND d.status = 'published' AND NOT d.deleted AND d.post IS NOT NULL
            """)
        let comments = try await Self.comments(of: ids, in: connection)
        let matched = Set(matched)
        var results: [String: SearchResult] = [:]
        for row in rows {
            let id = try row.decode("id", as: String.self)
            // The post as its events carried it, with what search keeps current itself.
            var post = try decoder.decode(Post.self, from: Data(try row.decode("post", as: String.self).utf8))
            post.author.name = try row.decode("author_name")
            post.author.profilePicture = try row.decode("author_picture")
            post.likes = try row.decode("likes")
            post.comments = comments[id] ?? []
            post.commentsCount = post.comments.count
            let highlights = Highlights(
                title: SplitText(tokens: try row.decode("title_tokens"), lexemes: try row.decode("title_lexemes"), matched: matched),
                content: SplitText(tokens: try row.decode("excerpt_tokens"), lexemes: try row.decode("excerpt_lexemes"), matched: matched))
            results[id] = SearchResult(post: post, highlights: highlights)
        }
        return results
    }

    /// The comments of `postIds`' posts, oldest first, with their authors' current names.
    static func comments(of postIds: [String], in connection: DatabaseConnection) async throws -> [String: [Comment]] {
        let rows = try await connection.query(
            """
            SELECT c.id, c.post_id, c.content, c.author_id, COALESCE(a.name, c.author_name) AS author_name,
                   CASE WHEN a.user_id IS NULL THEN c.author_picture ELSE a.profile_picture END AS author_picture, c.created_at
            FROM comments c LEFT JOIN authors a ON a.user_id = c.author_id
            WHERE c.post_id = ANY(\(postIds)) AND NOT c.deleted
            ORDER BY c.created_at, c.id
            """)
        var comments: [String: [Comment]] = [:]
        for row in rows {
            let comment = try Comment(row: row)
            comments[comment.postId, default: []].append(comment)
        }
        return comments
    }
}
