import Foundation
import PostlyModels
import Testing
import TestSupport

@testable import NotificationsService

/// Events through the broker and the service's consumer, starting from the samples in
/// `Tests/Fixtures/events/`: what notifies the post's author, and what does not.
@Suite struct NotificationEventTests {
    /// The samples' post, its author (Ada) and the reader who likes and comments (Grace).
    static let postId = "6f1c2a9e-3b7d-4c85-9e21-0a4b8d6f3c19"
    static let adaId = "9b2f7d1e-5c4a-4e8b-9f3a-2d6c8e1b7a40"
    static let grace = Author(userId: "3e8a1c52-7b9d-4f60-a2e4-5c1d9f8b6e27", name: "Grace Hopper", profilePicture: "https://images.example.test/grace.png")

    @Test func theSamplesNotifyThePostsAuthorOnceEachAndNotOfRepeatedOlderOrOwnActions() async throws {
        try await NotificationsTestService.run { service in
            let ada = try await service.user("Ada Lovelace", id: Self.adaId)
            let liked = try EventFixtures.event(.postLiked)
            let commented = try EventFixtures.event(.commentCreated)
            try await service.publish(liked)
            try await service.publish(commented)
            // The same like again, an older like by someone else, and Ada liking her own post.
            try await service.publish(liked)
            let other = Author(userId: UUID().uuidString.lowercased(), name: "Older")
            try await service.publish(likeEvent(post: Self.postId, author: Self.adaId, liker: other, sequence: 2))
            try await service.publish(likeEvent(post: Self.postId, author: Self.adaId, liker: ada.author, sequence: 4))
            try await service.publish(commentEvent(post: Self.postId, author: Self.adaId, commenter: ada.author, sequence: 2))
            try await service.waitUntilConsumed(.posts, key: Self.postId, sequence: 4)
            try await service.waitUntilConsumed(.comments, key: Self.postId, sequence: 2)

            let page = try await service.page(as: ada)
            #expect(page.notifications.map(\.type) == [.commentCreated, .postLiked])
            #expect(page.unreadCount == 2)
            #expect(page.pagination == Pagination(total: 2, page: 1, limit: 10))
            let comment = try #require(page.notifications.first)
            guard case .commentCreated(let sample) = commented.data else { Issue.record("not a comment"); return }
            #expect(comment.actor == Self.grace)
            #expect(comment.postId == Self.postId)
            #expect(comment.postTitle == "Crème brûlée, done right")
            #expect(comment.commentId == sample.comment.id)
            #expect(comment.createdAt == sample.comment.createdAt)
            #expect(comment.readAt == nil)
            let like = try #require(page.notifications.last)
            #expect(like.actor == Self.grace)
            #expect(like.commentId == nil)
            #expect(like.createdAt == liked.occurredAt)
            // Grace sees nothing of Ada's.
            #expect(try await service.page(as: try await service.user("Grace", id: Self.grace.userId)).notifications.isEmpty)
        }
    }

    /// An import brings comments made long ago: nobody is notified of them, but of the
    /// comment that follows them, as usual.
    @Test func importedCommentsNotifyNobody() async throws {
        try await NotificationsTestService.run { service in
            let ada = try await service.user("Ada Lovelace", id: Self.adaId)
            try await service.publish(try EventFixtures.importedEvent(.userRegistered))
            try await service.publish(try EventFixtures.importedEvent(.commentCreated))
            try await service.publish(commentEvent(post: Self.postId, author: Self.adaId, commenter: Self.grace, sequence: 2))
            try await service.waitUntilConsumed(.comments, key: Self.postId, sequence: 2)
            let page = try await service.page(as: ada)
            guard case .commentCreated(let imported) = try EventFixtures.importedEvent(.commentCreated).data else {
                Issue.record("not a comment"); return
            }
            #expect(page.notifications.count == 1 && page.unreadCount == 1)
            #expect(page.notifications.first?.commentId != imported.comment.id)
        }
    }

    @Test func likeUnlikeAndLikeAgainNotifiesOnce() async throws {
        try await NotificationsTestService.run { service in
            let author = try await service.user("Ada")
            let reader = try await service.user("Grace")
            let post = UUID().uuidString.lowercased()
            for (sequence, unlike) in [(1, false), (2, true), (3, false), (4, true), (5, false)] {
                try await service.publish(likeEvent(post: post, author: author.id, liker: reader.author, sequence: Int64(sequence), unlike: unlike))
            }
            try await service.waitUntilConsumed(.posts, key: post, sequence: 5)
            let page = try await service.page(as: author)
            #expect(page.notifications.map(\.type) == [.postLiked])
            #expect(page.unreadCount == 1)
        }
    }

    @Test func aDeletedCommentsAndADeletedPostsNotificationsDisappear() async throws {
        try await NotificationsTestService.run { service in
            let ada = try await service.user("Ada Lovelace", id: Self.adaId)
            let deletion = try EventFixtures.event(.commentDeleted)
            for event in [try EventFixtures.event(.postLiked), try EventFixtures.event(.commentCreated)] {
                try await service.publish(event)
            }
            #expect(try await eventually { try await service.page(as: ada).notifications.count == 2 })

            try await service.publish(deletion)
            try await service.waitUntilConsumed(.comments, key: Self.postId, sequence: deletion.sequence)
            #expect(try await service.page(as: ada).notifications.map(\.type) == [.postLiked])

            let postDeletion = try EventFixtures.event(.postDeleted)
            try await service.publish(postDeletion)
            // A comment that arrives after its post's deletion notifies nobody either.
            try await service.publish(commentEvent(post: Self.postId, author: Self.adaId, commenter: Self.grace, sequence: 3))
            try await service.waitUntilConsumed(.posts, key: Self.postId, sequence: postDeletion.sequence)
            try await service.waitUntilConsumed(.comments, key: Self.postId, sequence: 3)
            let page = try await service.page(as: ada)
            #expect(page.notifications.isEmpty)
            #expect(page.unreadCount == 0)
        }
    }

    @Test func actorsAreShownWithTheirCurrentNameAndPicture() async throws {
        try await NotificationsTestService.run { service in
            let author = try await service.user("Ada")
            let reader = try await service.user("Grace")
            let post = UUID().uuidString.lowercased()
            try await service.publish(likeEvent(post: post, author: author.id, liker: reader.author, sequence: 1))
            let renamed = UserSnapshot(userId: reader.id, name: "Grace Brewster Hopper", profilePicture: "https://images.example.test/g.png")
            try await service.publish(Event(producer: "auth", key: reader.id, sequence: 2, actorId: reader.id, data: .userUpdated(renamed)))
            // An older user event changes nothing.
            let older = UserSnapshot(userId: reader.id, name: "Old name", profilePicture: nil)
            try await service.publish(Event(producer: "auth", key: reader.id, sequence: 1, actorId: reader.id, data: .userRegistered(older)))
            try await service.waitUntilConsumed(.users, key: reader.id, sequence: 2)
            try await service.waitUntilConsumed(.posts, key: post, sequence: 1)
            let actor = try #require(try await service.page(as: author).notifications.first?.actor)
            #expect(actor == renamed.author)
        }
    }
}
