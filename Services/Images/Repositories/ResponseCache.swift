import Foundation
import NIOCore
import Synchronization

/// Answers of the image provider in memory, bounded by a number of entries and by bytes;
/// past either bound the least recently used entries go. An entry stays fresh for `ttl`;
/// after that it is kept (until evicted) to answer stale when the upstream cannot be asked.
final class ResponseCache: Sendable {
    struct Usage: Sendable, Equatable {
        var entries: Int
        var bytes: Int
    }

    struct Entry: Sendable {
        var body: ByteBuffer
        var storedAt: Date
        var lastUse: UInt64
        var bytes: Int
    }

    struct State: Sendable {
        var entries: [String: Entry] = [:]
        var bytes = 0
        var clock: UInt64 = 0
    }

    /// What an entry costs besides its body and key: the dictionary slot and the entry itself.
    static let overheadBytes = 128

    let maxEntries: Int
    let maxBytes: Int
    let ttl: TimeInterval
    private let state = Mutex(State())

    init(maxEntries: Int, maxBytes: Int, ttl: Duration) {
        self.maxEntries = maxEntries
        self.maxBytes = maxBytes
        self.ttl = TimeInterval(ttl.components.seconds)
    }

    /// The answer under `key` if it is fresh at `now`.
    func fresh(_ key: String, now: Date) -> ByteBuffer? {
        state.withLock { state in
            guard var entry = state.entries[key], now.timeIntervalSince(entry.storedAt) < ttl else { return nil }
            state.clock += 1
            entry.lastUse = state.clock
            state.entries[key] = entry
            return entry.body
        }
    }

    /// The answer under `key` however old it is.
    func any(_ key: String) -> ByteBuffer? {
        state.withLock { $0.entries[key]?.body }
    }

    /// Stores `body` under `key` (replacing what was there) and evicts what no longer fits.
    /// A body larger than the byte bound is not stored at all.
    func store(_ body: ByteBuffer, under key: String, now: Date) {
        let bytes = body.readableBytes + key.utf8.count + Self.overheadBytes
        guard bytes <= maxBytes else { return }
        state.withLock { state in
            state.clock += 1
            if let old = state.entries.updateValue(Entry(body: body, storedAt: now, lastUse: state.clock, bytes: bytes), forKey: key) {
                state.bytes -= old.bytes
            }
            state.bytes += bytes
            guard state.entries.count > maxEntries || state.bytes > maxBytes else { return }
            // Evictions follow misses, which the upstream budget keeps rare: a sort is cheap enough.
            for (oldKey, entry) in state.entries.sorted(by: { $0.value.lastUse < $1.value.lastUse }) {
                guard state.entries.count > maxEntries || state.bytes > maxBytes else { break }
                guard oldKey != key else { continue }
                state.entries[oldKey] = nil
                state.bytes -= entry.bytes
            }
        }
    }

    var usage: Usage {
        state.withLock { Usage(entries: $0.entries.count, bytes: $0.bytes) }
    }
}
