import PostlyService
import Synchronization

/// Values read from the database, kept in memory until a change drops them, never by age.
///
/// - Concurrent misses of one key wait for one load of it (`values(_:load:)`).
/// - A drop names tags (a post's id, a list's scope; `tags` says which a key has). A load that
///   began before a drop of one of its key's tags answers its callers but is not kept, so an
///   entry never holds what a committed change made stale, and a read after the drop never
///   joins such a load.
/// - Bounded by an estimate of the bytes held (`cost`): the least recently used entries go
///   first (`LeastRecentlyUsed`).
final class ReadCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    /// One load of missing keys, which later misses of the same keys wait for.
    private final class Load: Sendable {
        /// The cache's generation when the load began: a drop after it makes its values stale.
        let start: UInt64
        private let outcome = Mutex<(result: Result<[Key: Value], any Error>?, waiters: [CheckedContinuation<[Key: Value], any Error>])>((nil, []))

        init(start: UInt64) { self.start = start }

        func result() async throws -> [Key: Value] {
            try await withCheckedThrowingContinuation { continuation in
                let result = outcome.withLock { outcome in
                    if outcome.result == nil { outcome.waiters.append(continuation) }
                    return outcome.result
                }
                if let result { continuation.resume(with: result) }
            }
        }

        func finish(_ result: Result<[Key: Value], any Error>) {
            let waiters = outcome.withLock { outcome in
                outcome.result = result
                defer { outcome.waiters = [] }
                return outcome.waiters
            }
            for waiter in waiters { waiter.resume(with: result) }
        }
    }

    private struct State {
        var entries: LeastRecentlyUsed<Key, Value>
        var keysByTag: [String: Set<Key>] = [:]
        /// Grows with every load and drop.
        var generation: UInt64 = 0
        /// The generation of each tag's last drop, while a load that began before it may run.
        var droppedAt: [String: UInt64] = [:]
        var everythingDroppedAt: UInt64 = 0
        /// Running loads, and the one each missing key waits for.
        var loads: [ObjectIdentifier: Load] = [:]
        var loading: [Key: Load] = [:]
    }

    private let state: Mutex<State>
    let capacityBytes: Int
    private let cost: @Sendable (Key, Value) -> Int
    private let tags: @Sendable (Key) -> [String]

    init(capacityBytes: Int, cost: @escaping @Sendable (Key, Value) -> Int, tags: @escaping @Sendable (Key) -> [String]) {
        self.capacityBytes = capacityBytes
        self.state = Mutex(State(entries: LeastRecentlyUsed(maxBytes: capacityBytes)))
        self.cost = cost
        self.tags = tags
    }

    /// The values of `keys` from memory; the missing ones from one call of `load` (which leaves
    /// out keys that have no value), or from a load of them already running.
    func values(_ keys: [Key], load: @Sendable ([Key]) async throws -> [Key: Value]) async throws -> [Key: Value] {
        var found: [Key: Value] = [:]
        var waitFor: [ObjectIdentifier: Load] = [:]
        var missing: [Key] = []
        let ownLoad: Load? = state.withLock { state in
            for key in keys where found[key] == nil {
                if let value = state.entries.value(of: key) {
                    found[key] = value
                } else if let running = state.loading[key] {
                    waitFor[ObjectIdentifier(running)] = running
                } else if !missing.contains(key) {
                    missing.append(key)
                }
            }
            guard !missing.isEmpty else { return nil }
            state.generation += 1
            let own = Load(start: state.generation)
            state.loads[ObjectIdentifier(own)] = own
            for key in missing { state.loading[key] = own }
            return own
        }
        if let ownLoad {
            let result: Result<[Key: Value], any Error>
            do { result = .success(try await load(missing)) } catch { result = .failure(error) }
            state.withLock { state in
                state.loads[ObjectIdentifier(ownLoad)] = nil
                for key in missing where state.loading[key] === ownLoad { state.loading[key] = nil }
                if case .success(let values) = result {
                    for (key, value) in values { store(key, value, loadedSince: ownLoad.start, in: &state) }
                }
            }
            ownLoad.finish(result)
            for (key, value) in try result.get() { found[key] = value }
        }
        for running in waitFor.values {
            for (key, value) in try await running.result() where keys.contains(key) { found[key] = value }
        }
        return found
    }

    private func store(_ key: Key, _ value: Value, loadedSince start: UInt64, in state: inout State) {
        let bytes = cost(key, value)
        let keyTags = tags(key)
        guard bytes <= capacityBytes / 4, state.everythingDroppedAt <= start,
              keyTags.allSatisfy({ state.droppedAt[$0, default: 0] <= start })
        else { return }
        for (evicted, _) in state.entries.insert(value, bytes: bytes, for: key) { forgetTags(of: evicted, in: &state) }
        for tag in keyTags { state.keysByTag[tag, default: []].insert(key) }
    }

    private func remove(_ key: Key, from state: inout State) {
        guard state.entries.removeValue(forKey: key) != nil else { return }
        forgetTags(of: key, in: &state)
    }

    private func forgetTags(of key: Key, in state: inout State) {
        for tag in tags(key) {
            state.keysByTag[tag]?.remove(key)
            if state.keysByTag[tag]?.isEmpty == true { state.keysByTag[tag] = nil }
        }
    }

    /// Drops the entries with any of `tags`, and keeps loads that began before from being kept.
    func drop(tags dropped: [String]) {
        state.withLock { state in
            state.generation += 1
            for tag in dropped {
                state.droppedAt[tag] = state.generation
                for key in state.keysByTag[tag] ?? [] { remove(key, from: &state) }
            }
            // A read from now on must not join a load that began before the drop.
            for (key, _) in state.loading where tags(key).contains(where: dropped.contains) { state.loading[key] = nil }
            if state.droppedAt.count > 1024 {
                // Only a load that began before a drop is refused by it.
                let oldestStart = state.loads.values.map(\.start).min() ?? state.generation
                state.droppedAt = state.droppedAt.filter { $0.value > oldestStart }
            }
        }
    }

    /// Drops every entry, and keeps every load running now from being kept.
    func dropAll() {
        state.withLock { state in
            state.generation += 1
            state.everythingDroppedAt = state.generation
            state.entries.removeAll()
            state.keysByTag = [:]
            state.droppedAt = [:]
            state.loading = [:]
        }
    }

    /// Changes the entry of `key` in place, if there is one (its cost stays as estimated). A
    /// load of it running now is not kept: it may have read the value before the change.
    func update(_ key: Key, _ change: @Sendable (inout Value) -> Void) {
        state.withLock { state in
            state.entries.update(key, change)
            guard state.loading[key] != nil else { return }
            state.generation += 1
            for tag in tags(key) { state.droppedAt[tag] = state.generation }
            state.loading[key] = nil
        }
    }

    /// The estimated bytes held and the number of entries.
    var usage: (bytes: Int, entries: Int) {
        state.withLock { ($0.entries.bytes, $0.entries.count) }
    }
}
