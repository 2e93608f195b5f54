import Foundation
import Synchronization

/// Sessions that were revoked (logout, stolen refresh token) while their access tokens may
/// still be unexpired. Fed by `session.revoked` events; an entry is forgotten once every
/// token of its session has expired anyway.
public final class SessionDenyList: Sendable {
    private let revoked = Mutex<[String: Date]>([:])
    private let observers = Mutex<[@Sendable (String) -> Void]>([])

    public init() {}

    public func revoke(sessionId: String, until expiresAt: Date) {
        revoked.withLock { $0[sessionId] = max(expiresAt, $0[sessionId] ?? expiresAt) }
        for observer in observers.withLock({ $0 }) { observer(sessionId) }
    }

    /// Calls `observer` with the session id of every revocation from now on, for what
    /// outlives one token check (an open stream closes).
    public func onRevocation(_ observer: @escaping @Sendable (String) -> Void) {
        observers.withLock { $0.append(observer) }
    }

    public func isRevoked(_ sessionId: String, now: Date = Date()) -> Bool {
        revoked.withLock { entries in
            guard let until = entries[sessionId] else { return false }
            if until < now {
                entries[sessionId] = nil
                return false
            }
            return true
        }
    }

    public var count: Int { revoked.withLock { $0.count } }
}
