import Synchronization

/// Coalesces identical misses: the first caller for a key leads (makes the upstream call),
/// the ones that come while it runs wait for its outcome instead of calling too.
final class InFlightCalls<Outcome: Sendable>: Sendable {
    enum Role: Sendable {
        /// Make the call, then `finish` the key with its outcome (nil when no call was made).
        case lead
        /// The outcome of the call another caller led; nil when it made none (its user had
        /// no calls left), so this caller asks again.
        case joined(Outcome?)
    }

    private let waiting = Mutex<[String: [CheckedContinuation<Role, Never>]]>([:])

    /// Waits for the call in flight for `key`, or leads a new one.
    func leadOrJoin(_ key: String) async -> Role {
        await withCheckedContinuation { continuation in
            let leads: Bool = waiting.withLock { waiting in
                if waiting[key] != nil {
                    waiting[key]!.append(continuation)
                    return false
                }
                waiting[key] = []
                return true
            }
            if leads { continuation.resume(returning: .lead) }
        }
    }

    /// Ends the call for `key` and hands its outcome to everyone who waited.
    func finish(_ key: String, with outcome: Outcome?) {
        let waiters = waiting.withLock { $0.removeValue(forKey: key) ?? [] }
        for waiter in waiters { waiter.resume(returning: .joined(outcome)) }
    }
}
