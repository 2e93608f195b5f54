import PostlyService

/// Finds the post a comments route is about, as the caller may see it: from the projection
/// of post events, else from the posts service. A post that does not exist, is deleted, or
/// is another user's draft answers 404 alike, so existence is not leaked.
struct PostLookup: Sendable {
    let repository: any CommentRepository
    let postsService: PostsServiceClient

    func visiblePost(id: String, to identity: Identity?, authorization: String?) async throws -> KnownPost {
        let projected = try await repository.post(id: id)
        if let projected {
            guard !projected.deleted else { throw CommentError.postNotFound }
            if projected.isVisible(to: identity?.userId) { return projected }
        }
        // Unknown here, or hidden as the projection has it: its events may be behind (a draft
        // since published, a scheduled post come due; everyone got 404 until they arrived), and
        // the posts service has the last word. Hidden here with the posts service down: hidden.
        let answered =
            if projected == nil {
                try await postsService.post(id: id, authorization: authorization)
            } else {
                try? await postsService.post(id: id, authorization: authorization)
            }
        guard let answered, answered.isVisible(to: identity?.userId) else { throw CommentError.postNotFound }
        return answered
    }

    /// The post unless it was deleted, whoever may see it (the posts service answers only
    /// what the caller may see, but the projection has every post that has comments).
    func existingPost(id: String, authorization: String?) async throws -> KnownPost {
        let known: KnownPost?
        if let projected = try await repository.post(id: id) {
            known = projected
        } else {
            // Not stored: the events that follow would be applied over it, and a post
            // answered here carries no event sequence to order it with them.
            known = try await postsService.post(id: id, authorization: authorization)
        }
        guard let known, !known.deleted else { throw CommentError.postNotFound }
        return known
    }

    /// The posts of an import batch, by id, whoever may see them: from the projection, once
    /// their events have arrived (the importer sends comments right after their posts), waiting
    /// at most `wait`. Never from the posts service: reading a post there counts a view, and the
    /// import keeps the views it brings. Ids still unknown then are left out.
    func importedPosts(ids: Set<String>, wait: Duration) async throws -> [String: KnownPost] {
        var known: [String: KnownPost] = [:]
        func lookInProjection() async throws {
            for id in ids where known[id] == nil {
                if let post = try await repository.post(id: id) { known[id] = post }
            }
        }
        try await lookInProjection()
        let deadline = ContinuousClock.now + wait
        while known.count < ids.count, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(200))
            try await lookInProjection()
        }
        return known
    }
}
