import Foundation
import Synchronization

/// The upstream calls (cache misses) each user may cause in a sliding hour, so that one user
/// cannot spend everybody's budget. Counted in memory, per instance.
final class UserAllowance: Sendable {
    static let hour: TimeInterval = 3600

    let limit: Int
    /// Each user's calls of the last hour, oldest first.
    private let calls = Mutex<[String: [Date]]>([:])

    init(limit: Int) {
        self.limit = limit
    }

    /// Counts one call by `userId` at `now`; when the user has none left, counts nothing and
    /// returns when the next one becomes available.
    func take(userId: String, now: Date) -> Date? {
        calls.withLock { calls in
            var recent = calls[userId, default: []].filter { $0 + Self.hour > now }
            if recent.count >= limit {
                calls[userId] = recent
                return recent[0] + Self.hour
            }
            recent.append(now)
            calls[userId] = recent
            // Forget users with nothing left in the window, now and then, so the table stays small.
            if calls.count > 10_000 {
                calls = calls.filter { $0.value.contains { $0 + Self.hour > now } }
            }
            return nil
        }
    }

    /// Gives back a call counted by `take` that was not made after all.
    func giveBack(userId: String) {
        calls.withLock { calls in
            guard var recent = calls[userId], !recent.isEmpty else { return }
            recent.removeLast()
            calls[userId] = recent
        }
    }
}
