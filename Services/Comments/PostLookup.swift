import PostlyService

/// Finds the post a comments route is about, as the caller may see it: from the projection
/// of post events, else from the posts service. A post that does not exist, is deleted, or
/// is another user's draft answers 404 alike, so existence is not leaked.
struct PostLookup: Sendable {
    let repository: any CommentRepository
    let postsService: PostsServiceClient

    func visiblePost(id: String, to identity: Identity?, authorization: String?) async throws -> KnownPost {
        let known: KnownPost?
        if let projected = try await repository.post(id: id) {
            known = projected
        } else {
            // Not stored: the events that follow would be applied over it, and a post
            // answered here carries no event sequence to order it with them.
            known = try await postsService.post(id: id, authorization: authorization)
        }
        guard let known, known.isVisible(to: identity?.userId) else { throw CommentError.postNotFound }
        return known
    }

    /// The posts of an import batch, by id, whoever may see them: from the projection, else
    /// (published ones) from the posts service, else from the projection once their events
    /// arrive (the importer sends comments right after their posts), waiting at most `wait`.
    /// Ids still unknown then are left out.
    func importedPosts(ids: Set<String>, wait: Duration) async throws -> [String: KnownPost] {
        var known: [String: KnownPost] = [:]
        func lookInProjection() async throws {
            for id in ids where known[id] == nil {
                if let post = try await repository.post(id: id) { known[id] = post }
            }
        }
        try await lookInProjection()
        for id in ids where known[id] == nil {
            if let post = try await postsService.post(id: id, authorization: nil) { known[id] = post }
        }
        let deadline = ContinuousClock.now + wait
        while known.count < ids.count, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(200))
            try await lookInProjection()
        }
        return known
    }
}
