import Foundation
import HTTPTypes
import PostlyModels
import PostlyPostgres
import Testing
import TestSupport

@testable import NotificationsService

/// `GET /api/notifications` and `POST /api/notifications/read`: pages, the unread filter,
/// marking read, and what other users and bad input get.
@Suite struct NotificationRoutesTests {
    /// `count` likes of the author's posts by the reader, oldest first; their ids newest first.
    func seedLikes(_ count: Int, of author: NotificationsTestService.User, by reader: NotificationsTestService.User, in service: NotificationsTestService) async throws -> [String] {
        var posts: [String] = []
        for _ in 0..<count {
            let post = UUID().uuidString.lowercased()
            posts.append(post)
            try await service.publish(likeEvent(post: post, author: author.id, liker: reader.author, sequence: 1))
        }
        for post in posts { try await service.waitUntilConsumed(.posts, key: post, sequence: 1) }
        return try await service.page("?limit=100", as: author).notifications.map(\.id)
    }

    /// A page's counts are kept as the notifications change, by whatever writes them (here
    /// statements as an older release's instance sends them during a rolling update), through
    /// marking read, removals and repeats: they match what the table holds.
    @Test func theCountsFollowEveryWriterOfTheNotifications() async throws {
        try await NotificationsTestService.run { service in
            let author = try await service.user("Ada")
            let other = try await service.user("Grace")
            try await service.database.execute(
                """
                INSERT INTO notifications (id, recipient_id, type, actor_id, actor_name, post_id, post_title, created_at)
                SELECT 'n' || n, CASE WHEN n % 10 = 0 THEN \(other.id) ELSE \(author.id) END, 'post.liked', 'actor' || n, 'Actor',
                    'post' || (n % 3), 'Title', now() - make_interval(secs => n)
                FROM generate_series(1, 300) AS n
                """)
            let first = try await service.page(as: author)
            #expect(first.pagination.total == 270 && first.unreadCount == 270)
            let read = try await service.markRead(#"{"ids": ["\#(first.notifications[0].id)", "\#(first.notifications[1].id)"]}"#, as: author)
            #expect(read.status == .ok)
            try await service.database.execute("UPDATE notifications SET removed = true WHERE post_id = 'post1'")
            try await service.database.execute("UPDATE notifications SET removed = true WHERE post_id = 'post1'")
            try await service.database.execute("UPDATE notifications SET read_at = now() WHERE id IN ('n4', 'n5', 'n10')")

            for user in [author, other] {
                let truth = try await service.database.query(
                    """
                    SELECT count(*) AS total, count(*) FILTER (WHERE read_at IS NULL) AS unread
                    FROM notifications WHERE recipient_id = \(user.id) AND NOT removed
                    """)[0]
                let page = try await service.page(as: user)
                #expect(page.pagination.total == (try truth.decode("total", as: Int.self)))
                #expect(page.unreadCount == (try truth.decode("unread", as: Int.self)))
                #expect(try await service.page("?unread=true", as: user).pagination.total == page.unreadCount)
            }
            #expect(try await service.markRead(#"{"all": true}"#, as: author).status == .ok)
            #expect(try await service.page(as: author).unreadCount == 0)
        }
    }

    @Test func pagesAreNewestFirstAndCountUnread() async throws {
        try await NotificationsTestService.run { service in
            let author = try await service.user("Ada")
            let reader = try await service.user("Grace")
            let ids = try await seedLikes(3, of: author, by: reader, in: service)
            #expect(ids.count == 3)
            #expect(ids.allSatisfy { Array($0)[14] == "7" }, "version 7 UUIDs (`UUID.timeOrderedString`): \(ids)")

            let first = try await service.page("?page=1&limit=2", as: author)
            #expect(first.notifications.map(\.id) == Array(ids.prefix(2)))
            #expect(first.pagination == Pagination(total: 3, page: 1, limit: 2))
            #expect(first.pagination.totalPages == 2)
            #expect(first.unreadCount == 3)
            let second = try await service.page("?page=2&limit=2", as: author)
            #expect(second.notifications.map(\.id) == [ids[2]])

            // As the app decodes it: every key, dates with milliseconds, actor without email.
            let raw = try await service.list(as: author)
            #expect(raw.headers[.contentType] == "application/json; charset=utf-8")
            let object = try #require(try JSONSerialization.jsonObject(with: raw.data) as? [String: Any])
            #expect(Set(object.keys) == ["notifications", "pagination", "unreadCount"])
            let notification = try #require((object["notifications"] as? [[String: Any]])?.first)
            #expect(Set(notification.keys) == ["_id", "type", "actor", "postId", "postTitle", "commentId", "createdAt", "readAt"])
            let actor = try #require(notification["actor"] as? [String: Any])
            #expect(Set(actor.keys) == ["userId", "name", "profilePicture"])
            #expect((notification["createdAt"] as? String)?.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/) != nil)
        }
    }

    @Test func markingOneThenAllRead() async throws {
        try await NotificationsTestService.run { service in
            let author = try await service.user("Ada")
            let reader = try await service.user("Grace")
            let ids = try await seedLikes(3, of: author, by: reader, in: service)

            let one = try await service.markRead(#"{"ids": ["\#(ids[1])"]}"#, as: author)
            #expect(one.status == .ok)
            #expect(try one.decode(Message.self) == Message("1 notification marked as read"))
            var page = try await service.page(as: author)
            #expect(page.unreadCount == 2)
            #expect(page.notifications.map { $0.readAt != nil } == [false, true, false])
            #expect(try await service.page("?unread=true", as: author).notifications.map(\.id) == [ids[0], ids[2]])
            #expect(try await service.page("?unread=true", as: author).pagination.total == 2)
            #expect(try await service.page("?unread=false", as: author).notifications.count == 3)

            let all = try await service.markRead(#"{"all": true}"#, as: author)
            #expect(try all.decode(Message.self) == Message("2 notifications marked as read"))
            page = try await service.page(as: author)
            #expect(page.unreadCount == 0)
            #expect(page.notifications.allSatisfy { $0.readAt != nil })
            #expect(try await service.page("?unread=true", as: author).notifications.isEmpty)
        }
    }

    /// Marking read that fails for a transient reason (a deadlock with the consumer removing a
    /// deleted post's notifications, which takes the same rows in another order; here, as
    /// deterministic, its connection lost while it waits for a row lock) is run again: 200,
    /// not 503.
    @Test func markingReadThatLosesItsConnectionIsRunAgain() async throws {
        try await NotificationsTestService.run { service in
            let author = try await service.user("Ada")
            let reader = try await service.user("Grace")
            let ids = try await seedLikes(2, of: author, by: reader, in: service)

            let marking = try await service.database.transaction { holder in
                _ = try await holder.query("SELECT id FROM notifications WHERE id = ANY(\(ids)) FOR UPDATE")
                let marking = Task { try await service.markRead(#"{"all": true}"#, as: author) }
                #expect(try await service.database.endBackend(waitingForALockIn: "SET read_at") == 1)
                return marking
            }
            let response = try await marking.value
            #expect(response.status == .ok)
            #expect(try response.decode(Message.self) == Message("2 notifications marked as read"))
            #expect(try await service.page(as: author).unreadCount == 0)
        }
    }

    @Test func anotherUserCanNeitherReadNorMarkSomeonesNotifications() async throws {
        try await NotificationsTestService.run { service in
            let author = try await service.user("Ada")
            let reader = try await service.user("Grace")
            let ids = try await seedLikes(2, of: author, by: reader, in: service)

            let theirs = try await service.page(as: reader)
            #expect(theirs.notifications.isEmpty)
            #expect(theirs.unreadCount == 0)
            let marked = try await service.markRead(#"{"ids": ["\#(ids[0])", "\#(ids[1])", "unknown"]}"#, as: reader)
            #expect(marked.status == .ok)
            #expect(try marked.decode(Message.self) == Message("0 notifications marked as read"))
            #expect(try await service.markRead(#"{"all": true}"#, as: reader).status == .ok)
            #expect(try await service.page(as: author).unreadCount == 2)

            #expect(try await service.list(as: nil).status == .unauthorized)
            #expect(try await service.markRead(#"{"all": true}"#, as: nil).status == .unauthorized)
            #expect(try await service.ticket(for: nil).status == .unauthorized)
        }
    }

    @Test func badQueriesAndBodiesAnswer400Or422AndChangeNothing() async throws {
        try await NotificationsTestService.run { service in
            let author = try await service.user("Ada")
            let reader = try await service.user("Grace")
            _ = try await seedLikes(1, of: author, by: reader, in: service)

            for query in ["?page=0", "?page=x", "?limit=0", "?limit=101", "?limit=1.5", "?unread=yes", "?unread=1", "?unread="] {
                let response = try await service.list(query, as: author)
                #expect(response.status == .badRequest, "\(query)")
                #expect(response.problem?.status == 400)
            }
            for bad in BadJSONBodies.all {
                let response = try await service.markRead(bytes: bad.bytes, as: author)
                #expect(response.status == .badRequest, "\(bad.problem)")
                #expect(response.headers[.contentType] == "application/problem+json", "\(bad.problem)")
            }
            let tooMany = "[" + (0...100).map { "\"id\($0)\"" }.joined(separator: ",") + "]"
            let invalid = [
                "{}", #"{"ids": []}"#, #"{"all": false}"#, #"{"ids": ["a"], "all": true}"#, #"{"ids": \#(tooMany)}"#,
                #"{"ids": "x"}"#, #"{"ids": [1]}"#, #"{"ids": null, "all": "yes"}"#,
            ]
            for body in invalid {
                let response = try await service.markRead(body, as: author)
                #expect(response.status == .unprocessableContent, "\(body)")
                #expect(response.problem?.errors?.isEmpty == false, "\(body)")
            }
            #expect(try await service.markRead(#"{"all": true}"#, as: author, contentType: "text/plain").status == .unsupportedMediaType)
            #expect(try await service.page(as: author).unreadCount == 1)
        }
    }
}
