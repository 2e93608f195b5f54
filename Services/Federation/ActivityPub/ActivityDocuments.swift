import Foundation
import PostlyModels

/// The ActivityPub documents the service publishes and sends, built the one way: actors,
/// articles, tombstones, collections and the activities around them.
struct ActivityDocuments: Sendable {
    let urls: FederationURLs

    static let context: JSONValue = "https://www.w3.org/ns/activitystreams"
    /// Actors carry their key, described by the security vocabulary.
    static let actorContext: JSONValue = ["https://www.w3.org/ns/activitystreams", "https://w3id.org/security/v1"]

    /// ActivityPub's dates: RFC 3339 in UTC, whole seconds.
    static func date(_ date: Date) -> JSONValue {
        .string(date.formatted(.iso8601))
    }

    func person(_ actor: LocalActor, publicKeyPEM: String) -> JSONValue {
        let id = urls.actor(actor.userId)
        var person: [String: JSONValue] = [
            "@context": Self.actorContext, "id": .string(id), "type": "Person", "preferredUsername": .string(actor.handle),
            "name": .string(actor.name), "url": .string(urls.profilePage(actor.userId)), "inbox": .string(urls.inbox(actor.userId)),
            "outbox": .string(urls.outbox(actor.userId)), "followers": .string(urls.followers(actor.userId)),
            "following": .string(urls.following(actor.userId)), "endpoints": ["sharedInbox": .string(urls.sharedInbox)],
            "publicKey": ["id": .string(urls.key(of: actor.userId)), "owner": .string(id), "publicKeyPem": .string(publicKeyPEM)],
            "manuallyApprovesFollowers": false, "discoverable": true,
        ]
        if let picture = actor.profilePicture { person["icon"] = ["type": "Image", "url": .string(picture)] }
        return .object(person)
    }

    func instanceActor(publicKeyPEM: String) -> JSONValue {
        let id = urls.instanceActor
        return [
            "@context": Self.actorContext, "id": .string(id), "type": "Application", "preferredUsername": .string(urls.host),
            "name": "Postly", "inbox": .string(urls.sharedInbox), "outbox": .string(id + "/outbox"),
            "publicKey": ["id": .string(urls.key(of: InstanceActor.id)), "owner": .string(id), "publicKeyPem": .string(publicKeyPEM)],
            "manuallyApprovesFollowers": true,
        ]
    }

    /// A published post, the object of its `publication` (see `FederationURLs.article`). Its
    /// HTML is the posts service's sanitized rendering.
    func article(_ post: Post, publication: Int64?) -> JSONValue {
        var article: [String: JSONValue] = [
            "id": .string(urls.article(post.id, publication: publication)), "type": "Article", "name": .string(post.title),
            "content": .string(post.contentHtml ?? ""), "mediaType": "text/html", "summary": .string(post.excerpt),
            "url": .string(urls.permalink.url(of: post)), "attributedTo": .string(urls.actor(post.author.userId)),
            "published": Self.date(post.publishedAt ?? post.createdAt), "updated": Self.date(post.updatedAt),
            "to": [.string(FederationURLs.publicAudience)], "cc": [.string(urls.followers(post.author.userId))],
        ]
        if let cover = post.coverImage { article["image"] = ["type": "Image", "url": .string(cover)] }
        return .object(article)
    }

    func tombstone(postId: String, publication: Int64?, deletedAt: Date?) -> JSONValue {
        var tombstone: [String: JSONValue] = [
            "id": .string(urls.article(postId, publication: publication)), "type": "Tombstone", "formerType": "Article",
        ]
        if let deletedAt { tombstone["deleted"] = Self.date(deletedAt) }
        return .object(tombstone)
    }

    /// `object` with the context, as a document of its own.
    func document(_ object: JSONValue) -> JSONValue {
        guard case .object(var fields) = object else { return object }
        fields["@context"] = fields["@context"] ?? Self.context
        return .object(fields)
    }

    /// An activity of a post's author about the object of one of its publications: `Create`,
    /// `Update` or `Delete`, its id made from the object's and the event's sequence, so a retry
    /// or a replay repeats it.
    func postActivity(
        _ type: String, postId: String, publication: Int64?, authorId: String, sequence: Int64, object: JSONValue, at date: Date
    ) -> JSONValue {
        [
            "@context": Self.context, "id": .string("\(urls.article(postId, publication: publication))#\(type.lowercased())-\(sequence)"),
            "type": .string(type),
            "actor": .string(urls.actor(authorId)), "published": Self.date(date),
            "to": [.string(FederationURLs.publicAudience)], "cc": [.string(urls.followers(authorId))], "object": object,
        ]
    }

    /// `Update{Person}` after a profile change.
    func personUpdate(_ actor: LocalActor, publicKeyPEM: String, sequence: Int64, at date: Date) -> JSONValue {
        var person = person(actor, publicKeyPEM: publicKeyPEM)
        if case .object(var fields) = person {
            fields["@context"] = nil
            person = .object(fields)
        }
        let id = urls.actor(actor.userId)
        return [
            "@context": Self.actorContext, "id": .string("\(id)#update-\(sequence)"), "type": "Update", "actor": .string(id),
            "published": Self.date(date), "to": [.string(FederationURLs.publicAudience)], "cc": [.string(urls.followers(actor.userId))],
            "object": person,
        ]
    }

    /// `Accept{Follow}`, naming the follow by its id, actor and object, not with whatever
    /// else it carried: its size was the sender's to choose, and each Accept is a stored
    /// delivery.
    func accept(follow id: String, from follower: String, by userId: String) -> JSONValue {
        let actor = urls.actor(userId)
        return [
            "@context": Self.context, "id": .string("\(actor)#accepts/\(UUID().uuidString.lowercased())"), "type": "Accept",
            "actor": .string(actor), "object": ["id": .string(id), "type": "Follow", "actor": .string(follower), "object": .string(actor)],
        ]
    }

    /// An `OrderedCollection` that only counts (followers, following), as WriteFreely's.
    func countedCollection(id: String, totalItems: Int) -> JSONValue {
        ["@context": Self.context, "id": .string(id), "type": "OrderedCollection", "totalItems": .integer(totalItems)]
    }

    /// An outbox: the collection with its first page's link, or page `page` of it.
    func outbox(_ userId: String, totalItems: Int, page: Int?, pageSize: Int, posts: [ArticleRepository.Published]) -> JSONValue {
        let id = urls.outbox(userId)
        let pages = max(1, (totalItems + pageSize - 1) / pageSize)
        guard let page else {
            return [
                "@context": Self.context, "id": .string(id), "type": "OrderedCollection", "totalItems": .integer(totalItems),
                "first": .string("\(id)?page=1"), "last": .string("\(id)?page=\(pages)"),
            ]
        }
        var collection: [String: JSONValue] = [
            "@context": Self.context, "id": .string("\(id)?page=\(page)"), "type": "OrderedCollectionPage", "partOf": .string(id),
            "totalItems": .integer(totalItems),
            "orderedItems": .array(posts.map { published in
                let post = published.post
                return postActivity(
                    "Create", postId: post.id, publication: published.publication, authorId: userId, sequence: published.createSequence,
                    object: article(post, publication: published.publication), at: post.publishedAt ?? post.createdAt)
            }),
        ]
        if page < pages { collection["next"] = .string("\(id)?page=\(page + 1)") }
        if page > 1 { collection["prev"] = .string("\(id)?page=\(page - 1)") }
        return .object(collection)
    }
}

/// An author as a local actor.
struct LocalActor: Sendable, Equatable {
    var userId: String
    var handle: String
    var name: String
    var profilePicture: String?
}
