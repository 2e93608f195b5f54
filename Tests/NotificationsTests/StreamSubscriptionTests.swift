import Foundation
import Testing
import TestSupport

@testable import NotificationsService

/// A stream's queue is bounded: a reader that falls behind is dropped, not buffered for.
@Suite struct StreamSubscriptionTests {
    static func notification(_ position: Int64) -> StreamItem {
        .notification(
            StoredNotification(
                position: position, recipientId: "ada",
                notification: Notification(
                    id: "n\(position)", type: .postLiked, actor: .init(userId: "grace", name: "Grace"), postId: "p",
                    postTitle: "A post", commentId: nil, createdAt: Date(), readAt: nil)))
    }

    @Test func aReaderThatFallsBehindIsDroppedAndItsConnectionClosed() async {
        let closed = Locked(0)
        let subscription = StreamSubscription(id: "s1", userId: "ada", sessionId: "s", expiresAt: .distantFuture, capacity: 2) { closed.withLock { $0 += 1 } }
        guard case .queued = subscription.offer(Self.notification(1)), case .queued = subscription.offer(.heartbeat) else {
            Issue.record("within capacity, items are queued")
            return
        }
        guard case .overflowed = subscription.offer(Self.notification(2)) else {
            Issue.record("past capacity, the reader is dropped")
            return
        }
        #expect(closed.value == 1)
        guard case .ended = subscription.offer(Self.notification(3)) else {
            Issue.record("a dropped stream takes nothing more")
            return
        }
        // What was queued is all the stream still holds; the client replays the rest on reconnect.
        var count = 0
        for await _ in subscription.items { count += 1 }
        #expect(count == 2)
    }
}
