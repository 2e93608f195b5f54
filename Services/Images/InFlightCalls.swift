import Synchronization

/// Coalesces identical misses: the first caller for a key makes the upstream call, the
/// ones that come while it runs wait for its outcome instead of calling too.
final class InFlightCalls<Outcome: Sendable>: Sendable {
    enum Role: Sendable {
        /// Make the call, then `finish` the key with its outcome.
        case lead
        /// `mayLead` said no and no call was in flight.
        case refused
        /// Another caller's call, which this one waited for.
        case joined(Outcome)
    }

    private let waiting = Mutex<[String: [CheckedContinuation<Role, Never>]]>([:])

    /// Waits for the call in flight for `key`, or leads a new one when `mayLead` agrees
    /// (it runs under the lock, so it decides once per call).
    func leadOrJoin(_ key: String, mayLead: () -> Bool) async -> Role {
        await withCheckedContinuation { continuation in
            let decided: Role? = waiting.withLock { waiting in
                if waiting[key] != nil {
                    waiting[key]!.append(continuation)
                    return nil
                }
                guard mayLead() else { return .refused }
                waiting[key] = []
                return .lead
            }
            if let decided { continuation.resume(returning: decided) }
        }
    }

    /// Ends the call for `key` and hands its outcome to everyone who waited.
    func finish(_ key: String, with outcome: Outcome) {
        let waiters = waiting.withLock { $0.removeValue(forKey: key) ?? [] }
        for waiter in waiters { waiter.resume(returning: .joined(outcome)) }
    }
}
