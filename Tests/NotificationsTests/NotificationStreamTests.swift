import Foundation
import HTTPTypes
import PostlyModels
import PostlyPostgres
import PostlyService
import Testing
import TestSupport

@testable import NotificationsService

/// `GET /api/notifications/stream` over real sockets: live pushes, replay on reconnect,
/// several instances, revocation, disconnects, shutdown and tickets.
@Suite(.timeLimit(.minutes(2))) struct NotificationStreamTests {
    @Test func anOpenStreamReceivesALikeAndACommentWithinASecondInOrder() async throws {
        try await NotificationsTestService.run { service in
            let author = try await service.user("Ada")
            let reader = try await service.user("Grace")
            try await service.waitForConsumer()
            let stream = try await service.openStream(as: author)
            #expect(stream.status == 200)
            #expect(stream.headers["content-type"] == "text/event-stream")
            #expect(stream.headers["cache-control"] == "no-cache")

            let post = UUID().uuidString.lowercased()
            let likedAt = ContinuousClock.now
            try await service.publish(likeEvent(post: post, title: "Crème brûlée", author: author.id, liker: reader.author, sequence: 1))
            let commentedAt = ContinuousClock.now
            try await service.publish(commentEvent(post: post, title: "Crème brûlée", author: author.id, commenter: reader.author, sequence: 1))
            #expect(try await eventually(within: .seconds(5)) { stream.events.count == 2 })

            let events = stream.events
            #expect(events.map(\.event) == ["notification", "notification"])
            let notifications = events.compactMap(\.notification)
            #expect(notifications.map(\.type) == [.postLiked, .commentCreated])
            #expect(events.map(\.id) == notifications.map(\.id))
            #expect(notifications.allSatisfy { $0.actor == reader.author && $0.postTitle == "Crème brûlée" && $0.readAt == nil })
            let delays = [likedAt.duration(to: events[0].receivedAt), commentedAt.duration(to: events[1].receivedAt)]
            #expect(delays.allSatisfy { $0 < .seconds(1) }, "event published to stream: \(delays)")

            // The list shows them unread; one read, then all.
            let page = try await service.page(as: author)
            #expect(page.notifications.map(\.id) == notifications.reversed().map(\.id))
            #expect(page.unreadCount == 2)
            _ = try await service.markRead(#"{"ids": ["\#(notifications[0].id)"]}"#, as: author)
            #expect(try await service.page(as: author).unreadCount == 1)
            _ = try await service.markRead(#"{"all": true}"#, as: author)
            #expect(try await service.page(as: author).unreadCount == 0)
            // Nothing was pushed twice, and nothing of others' reached this stream.
            #expect(stream.events.count == 2)
            await stream.close()
        }
    }

    @Test func aReconnectWithLastEventIDGetsExactlyWhatWasMissed() async throws {
        try await NotificationsTestService.run { service in
            let author = try await service.user("Ada")
            let reader = try await service.user("Grace")
            let post = UUID().uuidString.lowercased()
            func comment(_ sequence: Int64) async throws {
                try await service.publishComment(on: post, of: author, by: reader, sequence: sequence)
            }
            let first = try await service.openStream(as: author)
            try await comment(1)
            try await comment(2)
            #expect(try await eventually { first.events.count == 2 })
            await first.close()

            try await comment(3)
            try await comment(4)
            try await service.waitUntilConsumed(.comments, key: post, sequence: 4)
            let missed = try await service.page(as: author).notifications.prefix(2).reversed().map(\.id)

            let second = try await service.openStream(as: author, lastEventId: try #require(first.events.last?.id))
            #expect(try await eventually { second.events.count == 2 })
            #expect(second.events.map(\.id) == missed)
            try await comment(5)
            #expect(try await eventually { second.events.count == 3 })
            try await Task.sleep(for: .milliseconds(300))
            let all = try await service.page(as: author).notifications.map(\.id)
            #expect(second.events.compactMap(\.id) == Array(all.prefix(3).reversed()))

            // An id that is not the caller's, or not known at all, starts after the caller's
            // newest notification, and replays nothing of anyone's.
            let stranger = try await service.user("Mallory")
            try await service.publish(likeEvent(post: UUID().uuidString.lowercased(), author: stranger.id, liker: reader.author, sequence: 1))
            #expect(try await eventually { try await service.page(as: stranger).notifications.count == 1 })
            let strangersNewest = try await service.page(as: stranger).notifications[0].id
            for lastEventId in [all[4], "start:\(author.id)", "no such notification"] {
                let third = try await service.openStream(as: stranger, lastEventId: lastEventId)
                #expect(try await eventually { third.lastEventId != nil })
                try await Task.sleep(for: .milliseconds(300))
                #expect(third.lastEventId == strangersNewest)
                #expect(third.events.isEmpty)
                await third.close()
            }
            await second.close()
        }
    }

    /// A stream that has carried no notification yet says where it stands, so a client that
    /// comes back with that id (after a deploy, an eviction, a lost connection) is replayed
    /// what was stored meanwhile, whether its user had notifications before or not.
    @Test func aStreamThatCarriedNothingYetIsReplayedWhatItMissed() async throws {
        try await NotificationsTestService.run { service in
            let author = try await service.user("Ada")
            let reader = try await service.user("Grace")
            let post = UUID().uuidString.lowercased()
            // Before the user's first notification.
            let first = try await service.openStream(as: author)
            #expect(try await eventually { first.lastEventId != nil })
            await first.close()
            try await service.publishComment(on: post, of: author, by: reader, sequence: 1)
            try await service.waitUntilConsumed(.comments, key: post, sequence: 1)
            let second = try await service.openStream(as: author, lastEventId: try #require(first.lastEventId))
            #expect(try await eventually { second.events.count == 1 })
            #expect(second.events.map(\.id) == (try await service.page(as: author).notifications.map(\.id)))
            await second.close()

            // After some: the stream starts after the newest.
            let third = try await service.openStream(as: author)
            #expect(try await eventually { third.lastEventId != nil })
            await third.close()
            try await service.publishComment(on: post, of: author, by: reader, sequence: 2)
            try await service.publishComment(on: post, of: author, by: reader, sequence: 3)
            try await service.waitUntilConsumed(.comments, key: post, sequence: 3)
            let missed = try await service.page(as: author).notifications.prefix(2).reversed().map(\.id)
            let fourth = try await service.openStream(as: author, lastEventId: try #require(third.lastEventId))
            #expect(try await eventually { fourth.events.count == 2 })
            try await Task.sleep(for: .milliseconds(300))
            #expect(fourth.events.map(\.id) == missed)
            await fourth.close()
        }
    }

    /// What is stored while a stream is being opened (after its start was read, before the hub
    /// holds it) is sent by its replay.
    @Test func aNotificationStoredWhileAStreamOpensIsSent() async throws {
        try await NotificationsTestService.run { service in
            let author = try await service.user("Ada")
            let reader = try await service.user("Grace")
            let post = UUID().uuidString.lowercased()
            // Counting the stream waits for this lock; its start was read before.
            let opening = try await service.database.whileLocked(by: {
                try await $0.execute("SELECT pg_advisory_xact_lock(hashtextextended(\("open-streams:" + author.id), 0))")
            }) {
                let opening = Task { try await service.openStream(as: author) }
                #expect(try await eventually { try await service.database.someoneWaitsForALock() }, "being counted")
                try await service.publishComment(on: post, of: author, by: reader, sequence: 1)
                try await service.waitUntilConsumed(.comments, key: post, sequence: 1)
                return opening
            }
            let stream = try await opening.value
            #expect(try await eventually { stream.events.count == 1 })
            #expect(stream.events.map(\.id) == (try await service.page(as: author).notifications.map(\.id)))
            await stream.close()
        }
    }

    @Test func aClientOnOneInstanceReceivesWhatAnotherInstanceConsumed() async throws {
        try await NotificationsTestService.run(instances: 2) { service in
            let author = try await service.user("Ada")
            let reader = try await service.user("Grace")
            try await service.waitForConsumer()
            // Instance 0 consumes from an empty broker: whatever it pushes, instance 1 stored.
            let stream = try await service.openStream(as: author, on: 0)
            let publishedAt = ContinuousClock.now
            try await service.publish(likeEvent(post: UUID().uuidString.lowercased(), author: author.id, liker: reader.author, sequence: 1))
            #expect(try await eventually(within: .seconds(5)) { stream.events.count == 1 })
            #expect(publishedAt.duration(to: stream.events[0].receivedAt) < .seconds(1))
            try await Task.sleep(for: .milliseconds(300))
            #expect(stream.events.count == 1)

            // A ticket from one instance opens a stream on the other, once.
            let ticket = try await service.ticket(for: author, on: 1).decode(Ticket.self).ticket
            let byTicket = try await EventStreamClient.open(port: service.instances[0].port, path: "/api/notifications/stream?ticket=\(ticket)")
            #expect(byTicket.status == 200)
            let again = try await EventStreamClient.open(port: service.instances[0].port, path: "/api/notifications/stream?ticket=\(ticket)")
            #expect(again.status == 401)
            await stream.close()
            await byTicket.close()
            await again.close()
        }
    }

    /// The instance's listening connection lost (a database restart, a failover): what was
    /// stored meanwhile was signalled to nobody here, so its open streams end, and their clients
    /// come back with Last-Event-ID for it.
    @Test func streamsEndWhenTheirInstanceLostItsListeningConnection() async throws {
        try await NotificationsTestService.run { service in
            let author = try await service.user("Ada")
            let stream = try await service.openStream(as: author)
            #expect(stream.status == 200)
            let listeners: SQL = "SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE '% listener'"
            #expect(try await eventually { try await !service.database.query(listeners).isEmpty })
            #expect(try await eventually(within: .seconds(10)) { stream.ended })
            let reopened = try await service.openStream(as: author)
            #expect(reopened.status == 200)
            await reopened.close()
        }
    }

    /// Listening's first start counts too: a stream held before it (the first listening
    /// connection failed, and the server answered meanwhile) was signalled nothing, so it ends
    /// and its client comes back with Last-Event-ID. It stayed open on heartbeats alone.
    @Test func aStreamHeldBeforeItsInstanceFirstListenedEndsOnceItListens() async throws {
        try await NotificationsTestService.run { service in
            let database = service.database
            let hub = NotificationHub(
                database: database, repository: PostgresNotificationRepository(database: database),
                openStreams: OpenStreams(database: database, streamsPerUser: 5, staleAfter: .seconds(30)), denyList: SessionDenyList(),
                heartbeatInterval: .milliseconds(200), streamCapacity: 16, logger: testLogger)
            let subscription = try await hub.admit(userId: "ada", sessionId: "session", expiresAt: Date() + 3600, closeConnection: {})
            hub.hold(subscription)
            #expect(!hub.hasListened, "not ready")
            let running = Task { try await hub.run() }
            let ended = await withTaskGroup { group in
                group.addTask {
                    for await _ in subscription.items {}
                    return true
                }
                group.addTask {
                    try? await Task.sleep(for: .seconds(5))
                    return false
                }
                defer { group.cancelAll() }
                return await group.next() ?? false
            }
            #expect(ended)
            #expect(hub.hasListened)
            running.cancel()
            _ = await running.result
        }
    }

    @Test func aRevokedSessionsStreamCloses() async throws {
        try await NotificationsTestService.run { service in
            let author = try await service.user("Ada")
            let otherSession = try await service.user("Ada", id: author.id)
            let stream = try await service.openStream(as: author)
            let survivor = try await service.openStream(as: otherSession)
            let revocation = SessionRevocation(sessionId: author.sessionId, userId: author.id, expiresAt: Date().addingTimeInterval(3600))
            try await service.publish(Event(producer: "auth", key: author.id, sequence: 3, actorId: author.id, data: .sessionRevoked(revocation)))
            #expect(try await eventually { stream.ended })
            #expect(!survivor.ended)
            let reopened = try await service.openStream(as: author)
            #expect(reopened.status == 401)
            await survivor.close()
            await reopened.close()
        }
    }

    /// A revoked session's streams, and expired ones, have their connections closed at once: a
    /// stream writing its replay to a reader that reads slowly went on to the replay's end
    /// (only the queue was ended).
    @Test func revokedAndExpiredStreamsHaveTheirConnectionsClosed() async throws {
        try await NotificationsTestService.run(configure: { $0.heartbeatInterval = .milliseconds(100) }) { service in
            let closed = Locked<Set<String>>([])
            func held(session: String, expiresAt: Date) async throws -> StreamSubscription {
                let subscription = try await service.hub.admit(userId: "ada", sessionId: session, expiresAt: expiresAt) {
                    closed.withLock { _ = $0.insert(session) }
                }
                service.hub.hold(subscription)
                return subscription
            }
            let revoked = try await held(session: "revoked", expiresAt: .distantFuture)
            let expired = try await held(session: "expired", expiresAt: Date())
            let kept = try await held(session: "kept", expiresAt: .distantFuture)
            service.hub.endSession("revoked")
            #expect(try await eventually(within: .seconds(5)) { closed.value == ["revoked", "expired"] })
            for subscription in [revoked, expired, kept] { service.hub.unsubscribe(subscription) }
        }
    }

    /// A stream whose row is gone is no longer counted (ended as its user's surplus before its
    /// instance held it, or purged as stale while the refreshes failed): it is closed, where it
    /// ran on uncounted and its user could open five more.
    @Test func aStreamNoLongerCountedIsClosed() async throws {
        try await NotificationsTestService.run(configure: { $0.heartbeatInterval = .milliseconds(100) }) { service in
            let closed = Locked(false)
            let subscription = try await service.hub.admit(userId: "ada", sessionId: "s", expiresAt: .distantFuture) { closed.withLock { $0 = true } }
            service.hub.hold(subscription)
            try await Task.sleep(for: .milliseconds(300))
            #expect(!closed.value)
            try await service.database.execute("DELETE FROM open_streams WHERE id = \(subscription.id)")
            #expect(try await eventually(within: .seconds(5)) { closed.value })
            service.hub.unsubscribe(subscription)
        }
    }

    /// A session revoked while its stream was being counted (here: the count waits on the
    /// user's lock) ends that stream too; it stayed open until its token expired.
    @Test func aStreamOpeningWhileItsSessionIsRevokedCloses() async throws {
        try await NotificationsTestService.run { service in
            let author = try await service.user("Ada")
            let opening = try await service.database.whileLocked(by: {
                try await $0.execute("SELECT pg_advisory_xact_lock(hashtextextended(\("open-streams:" + author.id), 0))")
            }) {
                let opening = Task { try await service.openStream(as: author) }
                #expect(try await eventually { try await service.database.someoneWaitsForALock() }, "being counted")
                let revocation = SessionRevocation(sessionId: author.sessionId, userId: author.id, expiresAt: Date().addingTimeInterval(3600))
                try await service.publish(Event(producer: "auth", key: author.id, sequence: 3, actorId: author.id, data: .sessionRevoked(revocation)))
                // Waiting by a list, not by opening streams: six openings would end this one as
                // its user's oldest, fix or no fix.
                #expect(try await eventually { try await service.list(as: author).status == .unauthorized })
                return opening
            }
            let stream = try await opening.value
            #expect(stream.status == 200)
            #expect(try await eventually(within: .seconds(5)) { stream.ended })
            await stream.close()
        }
    }

    /// A stream that cannot be counted could carry nothing either: with the database down, it
    /// answers 503 (it answered 200 and stayed empty).
    @Test func withTheDatabaseDownAStreamAnswers503() async throws {
        try await NotificationsTestService.run { service in
            let author = try await service.user("Ada")
            try await service.whileTheDatabaseIsDown {
                let refused = try await service.openStream(as: author)
                #expect(refused.status == 503)
                await refused.close()
            }
            let stream = try await service.openStream(as: author)
            #expect(stream.status == 200)
            await stream.close()
        }
    }

    /// Six streams of one user (other sessions included): the sixth closes the oldest.
    @Test func aUsersSixthStreamClosesItsOldest() async throws {
        try await NotificationsTestService.run { service in
            let author = try await service.user("Ada")
            var streams: [EventStreamClient] = []
            for _ in 0..<5 {
                streams.append(try await service.openStream(as: try await service.user("Ada", id: author.id)))
                // In order: which one is oldest must be clear.
                #expect(try await eventually { service.hub.streamCount == streams.count })
            }
            let other = try await service.openStream(as: try await service.user("Grace"))
            #expect(try await eventually { service.hub.streamCount == 6 })
            let sixth = try await service.openStream(as: author)
            #expect(sixth.status == 200)
            #expect(try await eventually { streams[0].ended })
            #expect(streams.dropFirst().allSatisfy { !$0.ended } && !other.ended && !sixth.ended)
            #expect(service.hub.streamCount == 6)
            for stream in streams + [other, sixth] { await stream.close() }
        }
    }

    /// A user's streams count together on every instance: with three open on each of two
    /// instances, the oldest ends, wherever it is.
    @Test func aUsersStreamsOnTwoInstancesCountTogether() async throws {
        try await NotificationsTestService.run(instances: 2) { service in
            let author = try await service.user("Ada")
            var streams: [EventStreamClient] = []
            for index in 0..<5 {
                streams.append(try await service.openStream(as: try await service.user("Ada", id: author.id), on: index % 2))
                #expect(try await eventually { service.instances.map(\.hub.streamCount).reduce(0, +) == streams.count })
            }
            #expect(try await service.database.query("SELECT count(*) AS n FROM open_streams")[0].decode("n", as: Int.self) == 5)
            let sixth = try await service.openStream(as: author, on: 1)
            #expect(sixth.status == 200)
            #expect(try await eventually { streams[0].ended }, "the oldest, on the other instance")
            #expect(streams.dropFirst().allSatisfy { !$0.ended } && !sixth.ended)
            #expect(try await eventually { service.instances[0].hub.streamCount == 2 && service.instances[1].hub.streamCount == 3 })
            for stream in streams + [sixth] { await stream.close() }
            #expect(try await eventually {
                try await service.database.query("SELECT count(*) AS n FROM open_streams")[0].decode("n", as: Int.self) == 0
            }, "a closed stream stops counting")
        }
    }

    /// A stream opened with a token that expires ends then, heartbeat or not.
    @Test func aStreamEndsWhenItsTokenExpires() async throws {
        try await NotificationsTestService.run(configure: { $0.heartbeatInterval = .milliseconds(100) }) { service in
            let stream = try await service.openStream(as: try await service.user("Ada", lifetime: 2))
            let lasting = try await service.openStream(as: try await service.user("Grace"))
            #expect(stream.status == 200)
            #expect(try await eventually(within: .seconds(6)) { stream.ended })
            #expect(!lasting.ended)
            await lasting.close()
        }
    }

    @Test func aClientThatLeavesFreesItsStreamAtOnce() async throws {
        try await NotificationsTestService.run { service in
            let author = try await service.user("Ada")
            let streams = [try await service.openStream(as: author), try await service.openStream(as: author)]
            #expect(try await eventually { service.hub.streamCount == 2 })
            await streams[0].close()
            let closedAt = ContinuousClock.now
            #expect(try await eventually(within: .seconds(2)) { service.hub.streamCount == 1 })
            #expect(closedAt.duration(to: .now) < .milliseconds(500))
            await streams[1].close()
            #expect(try await eventually(within: .seconds(2)) { service.hub.streamCount == 0 })
        }
    }

    @Test func idleStreamsGetCommentLines() async throws {
        try await NotificationsTestService.run(configure: { $0.heartbeatInterval = .milliseconds(100) }) { service in
            let stream = try await service.openStream(as: try await service.user("Ada"))
            #expect(try await eventually(within: .seconds(3)) { stream.comments.filter { $0.contains("keep-alive") }.count >= 3 })
            #expect(stream.events.isEmpty)
            await stream.close()
        }
    }

    /// Heartbeats go on while the database is slow to mark the streams as open (here: a row
    /// lock holds the update); they waited for it.
    @Test func heartbeatsDoNotWaitForTheDatabase() async throws {
        try await NotificationsTestService.run(configure: { $0.heartbeatInterval = .milliseconds(100) }) { service in
            let stream = try await service.openStream(as: try await service.user("Ada"))
            #expect(try await eventually { service.hub.streamCount == 1 })
            try await service.database.whileLocked(by: { try await $0.execute("SELECT id FROM open_streams FOR UPDATE") }) {
                try await Task.sleep(for: .milliseconds(300))
                let before = stream.comments.count
                try await Task.sleep(for: .seconds(1))
                #expect(stream.comments.count >= before + 5)
            }
            await stream.close()
        }
    }

    @Test func gracefulShutdownEndsOpenStreams() async throws {
        let stream = Locked<EventStreamClient?>(nil)
        let started = ContinuousClock.now
        try await NotificationsTestService.run { service in
            let opened = try await service.openStream(as: try await service.user("Ada"))
            stream.withLock { $0 = opened }
            #expect(try await eventually { service.hub.streamCount == 1 })
        }
        // The run returned: the server drained, so the stream ended from the server's side.
        let client = try #require(stream.value)
        #expect(try await eventually(within: .seconds(2)) { client.ended })
        #expect(started.duration(to: .now) < .seconds(25))
    }

    @Test func ticketsOpenTheStreamOnceAndExpire() async throws {
        try await NotificationsTestService.run(configure: { $0.ticketLifetime = .milliseconds(500) }) { service in
            let author = try await service.user("Ada")
            let response = try await service.ticket(for: author)
            #expect(response.status == .ok)
            let ticket = try response.decode(Ticket.self).ticket
            #expect(ticket.count == 64)

            let stream = try await EventStreamClient.open(port: service.port, path: "/api/notifications/stream?ticket=\(ticket)")
            #expect(stream.status == 200)
            #expect(try await eventually { service.hub.streamCount == 1 })
            for path in ["?ticket=\(ticket)", "?ticket=nonsense", "?ticket=", ""] {
                let refused = try await EventStreamClient.open(port: service.port, path: "/api/notifications/stream\(path)")
                #expect(refused.status == 401, "\(path)")
                await refused.close()
            }
            let expiring = try await service.ticket(for: author).decode(Ticket.self).ticket
            try await Task.sleep(for: .milliseconds(700))
            let late = try await EventStreamClient.open(port: service.port, path: "/api/notifications/stream?ticket=\(expiring)")
            #expect(late.status == 401)
            // Only hashes are stored.
            let stored = try await service.database.query("SELECT count(*) AS n FROM stream_tickets WHERE hash = \(Array(ticket.utf8))")
            #expect(try stored[0].decode("n", as: Int.self) == 0)
            await stream.close()
            await late.close()
        }
    }

    /// A ticket speaks for the token that asked for it, and no longer: once the token has
    /// expired, its ticket opens nothing (it opened the stream, backlog included, and the
    /// heartbeat ended it only a moment later).
    @Test func aTicketOpensNothingOnceItsTokenHasExpired() async throws {
        try await NotificationsTestService.run { service in
            let author = try await service.user("Ada", lifetime: 2)
            let ticket = try await service.ticket(for: author).decode(Ticket.self).ticket
            try await Task.sleep(for: .milliseconds(2_500))
            let late = try await EventStreamClient.open(port: service.port, path: "/api/notifications/stream?ticket=\(ticket)")
            #expect(late.status == 401)
            await late.close()
        }
    }

    struct Ticket: Decodable {
        var ticket: String
    }
}
