import PostlyModels

/// What a committed change makes stale in the read model (`ReadModel`), as this instance's
/// commits signal it and as instances tell each other (`ReadModelSync`).
enum PostChange: Hashable, Sendable {
    /// The post's fields changed (or it is gone).
    case post(id: String)
    /// The post's likes or comments changed: what the feeds, which show neither, are kept
    /// through (every like dropped every rendered feed). An older instance ignores the line
    /// during a rolling update, its post's counts stale until it is replaced.
    case counts(id: String)
    /// A post of this author joined or left the lists of posts with this status.
    case lists(authorId: String, status: PostStatus)
    /// Views were written: the post's total in the database.
    case views(id: String, total: Int)
    /// Anything may have changed (an author's name or picture, shown in many posts and
    /// comments; or changes that may have been missed).
    case everything

    /// One line of text: the payload of a commit signal, a line of a notification. Ids come last,
    /// so whatever they hold, they are read back whole.
    var line: String {
        switch self {
        case .post(let id): "p \(id)"
        case .counts(let id): "c \(id)"
        case .lists(let authorId, let status): "l \(status.rawValue) \(authorId)"
        case .views(let id, let total): "v \(total) \(id)"
        case .everything: "*"
        }
    }

    init?(line: Substring) {
        let parts = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        switch (parts.first, parts.count) {
        case ("p", 2...): self = .post(id: parts.dropFirst().joined(separator: " "))
        case ("c", 2...): self = .counts(id: parts.dropFirst().joined(separator: " "))
        case ("l", 3):
            guard let status = PostStatus(rawValue: String(parts[1])) else { return nil }
            self = .lists(authorId: String(parts[2]), status: status)
        case ("v", 3):
            guard let total = Int(parts[1]) else { return nil }
            self = .views(id: String(parts[2]), total: total)
        case ("*", 1): self = .everything
        default: return nil
        }
    }

    /// What a row of the change log says changed, its status before unknown: a post, in every
    /// list of its author, and in the published ones if it is or was public; a comment's post;
    /// everything an author's name and picture are shown in.
    static func logged(_ row: ChangeFeed.Row) -> [PostChange] {
        switch row.kind {
        case .post:
            let statuses: [PostStatus] = row.visibility == .public || row.everPublic ? [.draft, .scheduled, .published] : [.draft, .scheduled]
            return [.post(id: row.id)] + statuses.map { .lists(authorId: row.authorId, status: $0) }
        case .comment:
            return row.postId.map { [.counts(id: $0)] } ?? []
        case .author:
            return [.everything]
        }
    }

    /// The changes a write of a post makes: the post itself, and the lists of each status it
    /// left or joined (none when its status stayed), or the scheduled lists when it stayed
    /// scheduled for another time: the scheduler wakes on those (the post may be due sooner).
    static func written(
        id: String, authorId: String, statusBefore: PostStatus?, statusAfter: PostStatus?, rescheduled: Bool = false
    ) -> [PostChange] {
        var changes: [PostChange] = [.post(id: id)]
        if statusBefore != statusAfter {
            for status in [statusBefore, statusAfter].compactMap({ $0 }) { changes.append(.lists(authorId: authorId, status: status)) }
        } else if rescheduled {
            changes.append(.lists(authorId: authorId, status: .scheduled))
        }
        return changes
    }
}
