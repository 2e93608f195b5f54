import PostlyModels

/// What the comments service needs to know of a post: who wrote it, what it is called
/// (for the events), and whether others may see it.
struct KnownPost: Sendable, Hashable {
    var id: String
    var authorId: String
    var title: String
    var status: PostStatus
    var deleted: Bool

    /// Drafts are for their author only; deleted posts for nobody.
    func isVisible(to userId: String?) -> Bool {
        guard !deleted else { return false }
        return status == .published || userId == authorId
    }
}
