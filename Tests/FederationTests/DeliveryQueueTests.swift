import Foundation
import PostlyPostgres
import Testing
import TestSupport

@testable import FederationService

/// The deliveries table on a real database: workers of several instances never take the same
/// row, a host that keeps failing is left alone for a while, a given-up row stays dead.
@Suite(.serialized) struct DeliveryQueueTests {
    func enqueue(_ count: Int, host: String, in database: Database) async throws {
        try await database.transaction { connection in
            for index in 0..<count {
                let activity: JSONValue = ["id": .string("https://postly.example/ap/posts/\(index)#create-1"), "type": "Create"]
                try await DeliveryQueue.to("https://\(host)/users/\(index)/inbox", activity, signer: "ada", in: connection)
            }
        }
    }

    /// Queues `activities` (ids) of one post, in order, to each of `inboxes`.
    func enqueue(_ activities: [String], to inboxes: [String], in database: Database) async throws {
        try await database.transaction { connection in
            for id in activities {
                for inbox in inboxes {
                    try await DeliveryQueue.to(inbox, ["id": .string("\(Self.post)#\(id)")], signer: "ada", in: connection)
                }
            }
        }
    }

    static let post = "https://postly.example/ap/posts/p1"

    /// The activities `claimed` names, by the part of their ids after the post's.
    func names(_ claimed: [Delivery]) -> [String] {
        claimed.map { String($0.activityId.dropFirst(Self.post.count + 1)) }.sorted()
    }

    @Test func aPostsActivitiesReachAnInboxOneAtATimeInTheOrderTheyWereQueued() async throws {
        try await TestDatabase.with(poolSize: 2) { database in
            try await schema.apply(to: database)
            try await enqueue(["create-1", "update-2", "update-3"], to: ["https://a.example/inbox", "https://b.example/inbox"], in: database)
            let queue = DeliveryQueue(database: database, clock: { Date() })
            // Claimed together, they were sent at once, and the Update could arrive first.
            let creates = try await queue.claim(limit: 10)
            #expect(names(creates) == ["create-1", "create-1"])
            #expect(try await queue.claim(limit: 10).isEmpty)
            try await queue.delivered(creates[0])
            let update = try await queue.claim(limit: 10)
            #expect(names(update) == ["update-2"] && update.first?.inbox == creates[0].inbox)
            // A given-up delivery holds nothing back.
            try await queue.failed(update[0], status: 404, error: "answered 404", retryAt: nil, pauseAfter: 10, pauseUntil: Date())
            #expect(names(try await queue.claim(limit: 10)) == ["update-3"])
        }
    }

    /// The Delete of a post whose Create is being sent goes after it: dropped, the Create was
    /// still on its way, and could arrive after the Delete and bring the post back. If the
    /// Create fails, it is dropped then, and not tried again before the Delete.
    @Test func aDeleteGoesAfterTheCreateBeingSentAndAFailedOneIsDropped() async throws {
        try await TestDatabase.with(poolSize: 2) { database in
            try await schema.apply(to: database)
            let inboxes = ["https://a.example/inbox", "https://b.example/inbox"]
            try await enqueue(["create-1"], to: inboxes, in: database)
            let queue = DeliveryQueue(database: database, clock: { Date() })
            let sending = try await queue.claim(limit: 10)
            #expect(sending.count == 2)
            try await database.transaction { connection in
                try await DeliveryQueue.dropChanges(of: Self.post, in: connection)
            }
            // Republished at once: its new Create goes after the Delete.
            try await enqueue(["delete-2", "create-3"], to: inboxes, in: database)
            #expect(try await queue.claim(limit: 10).isEmpty)

            try await queue.delivered(sending[0])
            try await queue.failed(sending[1], status: 503, error: "answered 503", retryAt: Date(), pauseAfter: 10, pauseUntil: Date())
            let deletes = try await queue.claim(limit: 10)
            #expect(names(deletes) == ["delete-2", "delete-2"])
            for delivery in deletes { try await queue.delivered(delivery) }
            #expect(names(try await queue.claim(limit: 10)) == ["create-3", "create-3"])
            #expect(try await database.query("SELECT 1 FROM deliveries WHERE activity_id LIKE '%#create-1'").isEmpty)
        }
    }

    @Test func concurrentClaimsNeverTakeTheSameDelivery() async throws {
        try await TestDatabase.with(poolSize: 4) { database in
            try await schema.apply(to: database)
            try await enqueue(100, host: "a.example", in: database)
            let queue = DeliveryQueue(database: database, clock: { Date() })
            async let first = queue.claim(limit: 60)
            async let second = queue.claim(limit: 60)
            let (one, two) = try await (first, second)
            #expect(one.count + two.count == 100)
            #expect(Set(one.map(\.id)).isDisjoint(with: two.map(\.id)))
            // Claimed rows are leased: nothing is due until the lease ends.
            #expect(try await queue.claim(limit: 100).isEmpty)
            let later = DeliveryQueue(database: database, clock: { Date().addingTimeInterval(61) })
            #expect(try await later.claim(limit: 100).count == 100)
        }
    }

    @Test func aHostFailingTenTimesInARowIsPausedAndAGivenUpDeliveryStaysDead() async throws {
        try await TestDatabase.with(poolSize: 2) { database in
            try await schema.apply(to: database)
            try await enqueue(10, host: "down.example", in: database)
            try await enqueue(1, host: "up.example", in: database)
            let queue = DeliveryQueue(database: database, clock: { Date() })
            let now = Date()
            for delivery in try await queue.claim(limit: 100) where delivery.host == "down.example" {
                try await queue.failed(delivery, status: 503, error: "answered 503", retryAt: now, pauseAfter: 10, pauseUntil: now.addingTimeInterval(600))
            }
            let soon = DeliveryQueue(database: database, clock: { now.addingTimeInterval(61) })
            let due = try await soon.claim(limit: 100)
            #expect(due.map(\.host) == ["up.example"])  // down.example is paused for 10 minutes
            let afterPause = DeliveryQueue(database: database, clock: { now.addingTimeInterval(601) })
            // (up.example's lease has ended too: it was never acknowledged.)
            let resumed = try await afterPause.claim(limit: 100).filter { $0.host == "down.example" }
            #expect(resumed.count == 10 && resumed.allSatisfy { $0.attempts == 2 })

            try await queue.failed(resumed[0], status: 404, error: "answered 404", retryAt: nil, pauseAfter: 10, pauseUntil: now)
            let dead = try await database.query("SELECT count(*) AS n FROM deliveries WHERE dead").first?.decode("n", as: Int.self)
            #expect(dead == 1)
            let never = DeliveryQueue(database: database, clock: { now.addingTimeInterval(10 * 86400) })
            #expect(try await never.claim(limit: 100).count == 10)  // 9 of down.example and up.example: not the dead one
        }
    }

    /// A host that answers is up, whatever it answers: ten 404s in a row (an actor whose inbox
    /// is gone, or made to fail) do not pause the deliveries to its other inboxes.
    @Test func aHostAnswering4xxIsNotPaused() async throws {
        try await TestDatabase.with(poolSize: 2) { database in
            try await schema.apply(to: database)
            try await enqueue(11, host: "up.example", in: database)
            let queue = DeliveryQueue(database: database, clock: { Date() })
            let now = Date()
            let claimed = try await queue.claim(limit: 10)
            for delivery in claimed {
                try await queue.failed(delivery, status: 404, error: "answered 404", retryAt: nil, pauseAfter: 10, pauseUntil: now.addingTimeInterval(600))
            }
            #expect(claimed.count == 10)
            #expect(try await queue.claim(limit: 100).count == 1)
        }
    }
}
