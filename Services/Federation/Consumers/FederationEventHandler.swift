import Foundation
import PostlyEvents
import PostlyMarkdown
import PostlyModels
import PostlyPostgres

/// Turns `postly.posts` and `postly.users` into the fediverse's view and its deliveries, in the
/// runner's transaction (the deliveries commit with the change that decided them):
/// - a post's first event as published (a scheduled post's publish included) sends `Create`,
///   a later edit of it `Update`, its deletion or unpublishing `Delete{Tombstone}`; drafts,
///   scheduled posts among them, never leave; a post published again is a new object, whose
///   `Create` servers accept after the last one's `Delete`;
/// - a user event names the actor; a changed name or picture sends `Update{Person}`.
/// The runner has dropped stale and repeated events already.
struct FederationEventHandler: EventHandler {
    let documents: ActivityDocuments
    let keys: ActorKeys

    func apply(_ event: Event, in connection: DatabaseConnection) async throws {
        switch event.data {
        case .postCreated(let snapshot), .postUpdated(let snapshot):
            try await apply(post: snapshot.post, deletedAt: nil, sequence: event.sequence, at: event.occurredAt, in: connection)
        case .postDeleted(let snapshot):
            try await apply(post: snapshot.post, deletedAt: snapshot.deletedAt ?? event.occurredAt, sequence: event.sequence, at: event.occurredAt, in: connection)
        case .userRegistered(let user), .userUpdated(let user):
            guard let changed = try await ActorRepository.store(user.author, sequence: event.sequence, in: connection) else { return }
            let hasFollowers = try await !connection.query("SELECT 1 FROM followers WHERE actor_id = \(user.userId) LIMIT 1").isEmpty
            guard hasFollowers else { return }
            let key = try await keys.keyPair(of: user.userId)
            let update = documents.personUpdate(changed, publicKeyPEM: key.publicKeyPEM, sequence: event.sequence, at: event.occurredAt)
            try await DeliveryQueue.toFollowers(of: user.userId, update, in: connection)
        default:
            return
        }
    }

    private func apply(post: Post, deletedAt: Date?, sequence: Int64, at date: Date, in connection: DatabaseConnection) async throws {
        let before = try await ArticleRepository.state(of: post.id, in: connection)
        // A deleted post stays deleted whatever arrives late.
        guard !before.deleted else { return }
        let isPublic = deletedAt == nil && post.status == .published
        // A post never public has nothing to show or send, and no row answers the same as its
        // row would: most creates are drafts, so this is most of what federation does for them.
        // One public once and unpublished since keeps its row, so its deletion leaves a tombstone.
        guard isPublic || before.createSequence != nil || (before.stored && deletedAt != nil) else { return }
        try await ActorRepository.store(post.author, sequence: nil, in: connection)
        var post = post
        // An event written before posts carried its rendering is rendered here, as posts does.
        if isPublic { post.contentHtml = post.contentHtml ?? Markdown.render(post.content).html }
        let createSequence = isPublic ? (before.createSequence ?? sequence) : nil
        // A stored post that is not federated was unpublished (a Delete went out): published
        // again, it is a new object.
        let publication = before.stored && before.createSequence == nil && isPublic ? sequence : before.publication
        try await ArticleRepository.store(post, deletedAt: deletedAt, createSequence: createSequence, publication: publication, in: connection)
        let author = post.author.userId
        func activity(_ type: String, _ object: JSONValue) -> JSONValue {
            documents.postActivity(type, postId: post.id, publication: publication, authorId: author, sequence: sequence, object: object, at: date)
        }
        let sent: JSONValue
        switch (before.createSequence != nil, isPublic) {
        case (false, true):
            sent = activity("Create", documents.article(post, publication: publication))
        case (true, true):
            // An event that changes nothing the fediverse sees (a republish) sends nothing.
            let article = documents.article(post, publication: publication)
            if let shown = before.shown, documents.article(shown, publication: publication) == article { return }
            sent = activity("Update", article)
        case (true, false):
            sent = activity("Delete", documents.tombstone(postId: post.id, publication: publication, deletedAt: deletedAt ?? date))
        case (false, false):
            return
        }
        try await DeliveryQueue.toFollowers(of: author, sent, in: connection)
    }
}
