import Foundation
import NIOCore
import PostlyService
import Synchronization

/// Answers of the image provider in memory, bounded by a number of entries and by bytes;
/// past either bound the least recently used entries go (`LeastRecentlyUsed`). An entry stays
/// fresh for `ttl`; after that it is kept (until evicted) to answer stale when the upstream
/// cannot be asked.
final class ResponseCache: Sendable {
    struct Usage: Sendable, Equatable {
        var entries: Int
        var bytes: Int
    }

    private struct Answer {
        var body: ByteBuffer
        var storedAt: Date
    }

    /// What an entry costs besides its body and key: the slot and the dictionary's entry.
    static let overheadBytes = 128

    let maxBytes: Int
    let ttl: TimeInterval
    private let answers: Mutex<LeastRecentlyUsed<String, Answer>>

    init(maxEntries: Int, maxBytes: Int, ttl: Duration) {
        self.maxBytes = maxBytes
        self.ttl = TimeInterval(ttl.components.seconds)
        answers = Mutex(LeastRecentlyUsed(maxBytes: maxBytes, maxEntries: maxEntries))
    }

    /// The answer under `key` if it is fresh at `now`.
    func fresh(_ key: String, now: Date) -> ByteBuffer? {
        answers.withLock { answers in
            guard let answer = answers.peek(key), now.timeIntervalSince(answer.storedAt) < ttl else { return nil }
            return answers.value(of: key)?.body
        }
    }

    /// The answer under `key` however old it is.
    func any(_ key: String) -> ByteBuffer? {
        answers.withLock { $0.peek(key)?.body }
    }

    /// Stores `body` under `key` (replacing what was there) and evicts what no longer fits.
    /// A body larger than the byte bound is not stored at all.
    func store(_ body: ByteBuffer, under key: String, now: Date) {
        let bytes = body.readableBytes + key.utf8.count + Self.overheadBytes
        let evicted = answers.withLock { $0.insert(Answer(body: body, storedAt: now), bytes: bytes, for: key) }
        _ = evicted  // freed here, outside the lock
    }

    var usage: Usage {
        answers.withLock { Usage(entries: $0.count, bytes: $0.bytes) }
    }
}
