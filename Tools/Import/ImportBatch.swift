import PostlyModels

/// One request to a service's import route: at most ``maximumDocuments`` documents and
/// ``maximumBytes`` of body, under the services' 1 MiB limit.
public struct ImportBatch: Sendable {
    public static let maximumDocuments = 500
    public static let maximumBytes = 900 * 1024

    public var collection: ImportReport.Collection
    public var body: [UInt8]
    public var count: Int
    /// The source file offset after its last document (the state's `byteOffset`).
    public var endOffset: Int
    /// The source line of each document id, for the service's rejections.
    public var lines: [String: Int]

    /// The plan's `collection` cut into batches, without the comments of `refusedPosts`.
    public static func batches(
        of plan: ImportPlan, _ collection: ImportReport.Collection, leavingOutCommentsOf refusedPosts: Set<String> = []
    ) -> [ImportBatch] {
        switch collection {
        case .users:
            split(plan.users, .users, id: \.userId) { _, users in UsersBody(users: users) }
        case .posts:
            // The aliases ride with the first batch of posts (there is one even without posts).
            split(plan.posts, .posts, id: \._id, reserve: size(of: plan.aliases), alwaysOne: !plan.aliases.isEmpty) { index, posts in
                PostsBody(posts: posts, aliases: index == 0 ? plan.aliases : [])
            }
        case .comments:
            split(plan.comments.filter { !refusedPosts.contains($0.record.postId) }, .comments, id: \._id) { _, comments in
                CommentsBody(comments: comments)
            }
        case .likes:
            split(plan.likes, .likes, id: { ImportOutcome.likeId(postId: $0.postId, userId: $0.userId) }) { _, likes in
                LikesBody(likes: likes)
            }
        }
    }

    private static func split<Record: Codable & Sendable, Body: Encodable>(
        _ items: [ImportPlan.Planned<Record>], _ collection: ImportReport.Collection, id: (Record) -> String,
        reserve: Int = 0, alwaysOne: Bool = false, body: (_ index: Int, [Record]) -> Body
    ) -> [ImportBatch] {
        var batches: [ImportBatch] = []
        var current: [ImportPlan.Planned<Record>] = []
        var bytes = 64 + reserve
        func flush() {
            guard !current.isEmpty || (alwaysOne && batches.isEmpty) else { return }
            batches.append(ImportBatch(
                collection: collection, body: encode(body(batches.count, current.map(\.record))), count: current.count,
                endOffset: current.last?.endOffset ?? 0,
                lines: Dictionary(current.map { (id($0.record), $0.line) }, uniquingKeysWith: { first, _ in first })))
            current = []
            bytes = 64
        }
        for item in items {
            let size = Self.size(of: item.record) + 1
            if !current.isEmpty, current.count == maximumDocuments || bytes + size > maximumBytes { flush() }
            current.append(item)
            bytes += size
        }
        flush()
        return batches
    }

    private static func size(of value: some Encodable) -> Int {
        encode(value).count
    }

    private static func encode(_ value: some Encodable) -> [UInt8] {
        // The records are strings, numbers and optionals: encoding them cannot fail.
        try! PostlyJSON.encode(value)
    }

    struct UsersBody: Encodable { var users: [ImportRecords.User] }
    struct PostsBody: Encodable {
        var posts: [ImportRecords.Post]
        var aliases: [ImportRecords.Alias]
    }
    struct CommentsBody: Encodable { var comments: [ImportRecords.Comment] }
    struct LikesBody: Encodable { var likes: [ImportRecords.Like] }
}
