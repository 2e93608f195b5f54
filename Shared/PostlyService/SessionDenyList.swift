import Foundation
import Synchronization

/// Sessions that were revoked (logout, stolen refresh token) while their access tokens may
/// still be unexpired. Fed by `session.revoked` events; an entry is forgotten once every
/// token of its session has expired anyway.
public final class SessionDenyList: Sendable {
    private struct Entries {
        var until: [String: Date] = [:]
        /// The size at which the expired entries are swept out: an entry whose tokens nobody
        /// presents again (the usual logout) is never looked up after it expires.
        var sweepAt = SessionDenyList.smallestSweep
    }

    static let smallestSweep = 1024

    private let revoked = Mutex(Entries())
    private let observers = Mutex<[@Sendable (String) -> Void]>([])

    public init() {}

    /// Refuses the session's tokens until `expiresAt`. A revocation whose tokens have all
    /// expired is ignored: every start replays the topic's whole history of revocations.
    public func revoke(sessionId: String, until expiresAt: Date, now: Date = Date()) {
        guard expiresAt > now else { return }
        revoked.withLock { entries in
            entries.until[sessionId] = max(expiresAt, entries.until[sessionId] ?? expiresAt)
            if entries.until.count >= entries.sweepAt {
                entries.until = entries.until.filter { $0.value > now }
                entries.sweepAt = max(Self.smallestSweep, 2 * entries.until.count)
            }
        }
        for observer in observers.withLock({ $0 }) { observer(sessionId) }
    }

    /// Calls `observer` with the session id of every revocation from now on, for what
    /// outlives one token check (an open stream closes).
    public func onRevocation(_ observer: @escaping @Sendable (String) -> Void) {
        observers.withLock { $0.append(observer) }
    }

    public func isRevoked(_ sessionId: String, now: Date = Date()) -> Bool {
        revoked.withLock { entries in
            guard let until = entries.until[sessionId] else { return false }
            if until < now {
                entries.until[sessionId] = nil
                return false
            }
            return true
        }
    }

    public var count: Int { revoked.withLock { $0.until.count } }
}
