/// Values by key, bounded by their bytes (as the caller counts them) and their number: past
/// either bound the least recently used go first. Every operation takes constant time: the
/// entries are a list in order of use, threaded through an array of slots.
///
/// Not synchronized: its owner keeps it behind a lock (and may free what `insert` evicts outside).
/// The one way Postly's services keep a bounded cache (posts' reads, search's contents,
/// images' answers).
public struct LeastRecentlyUsed<Key: Hashable, Value> {
    private struct Slot {
        var key: Key
        var value: Value
        var bytes: Int
        var newer: Int?
        var older: Int?
    }

    public let maxBytes: Int
    public let maxEntries: Int
    public private(set) var bytes = 0
    /// A slot is nil while it is free (in `freeSlots`); every slot in `slotOfKey` holds its entry.
    private var slots: [Slot?] = []
    private var freeSlots: [Int] = []
    private var slotOfKey: [Key: Int] = [:]
    private var newest: Int?
    private var oldest: Int?

    public init(maxBytes: Int, maxEntries: Int = .max) {
        self.maxBytes = maxBytes
        self.maxEntries = maxEntries
    }

    public var count: Int { slotOfKey.count }

    /// The value of `key`, which becomes the most recently used.
    public mutating func value(of key: Key) -> Value? {
        guard let slot = slotOfKey[key] else { return nil }
        unlink(slot)
        linkAsNewest(slot)
        return slots[slot]!.value
    }

    /// The value of `key`, leaving the order of use as it is.
    public func peek(_ key: Key) -> Value? {
        slotOfKey[key].map { slots[$0]!.value }
    }

    /// Stores `value` under `key` as the most recently used, replacing what was there, and
    /// returns the entries evicted to make room. A value of more than `maxBytes` is not stored
    /// (and what was under its key is removed).
    @discardableResult
    public mutating func insert(_ value: Value, bytes: Int, for key: Key) -> [(key: Key, value: Value)] {
        removeValue(forKey: key)
        guard bytes <= maxBytes else { return [] }
        var evicted: [(key: Key, value: Value)] = []
        while let oldest, self.bytes + bytes > maxBytes || count >= maxEntries {
            let slot = slots[oldest]!
            removeValue(forKey: slot.key)
            evicted.append((slot.key, slot.value))
        }
        let entry = Slot(key: key, value: value, bytes: bytes)
        let slot: Int
        if let free = freeSlots.popLast() {
            slot = free
            slots[slot] = entry
        } else {
            slot = slots.count
            slots.append(entry)
        }
        slotOfKey[key] = slot
        self.bytes += bytes
        linkAsNewest(slot)
        return evicted
    }

    @discardableResult
    public mutating func removeValue(forKey key: Key) -> Value? {
        guard let slot = slotOfKey.removeValue(forKey: key) else { return nil }
        unlink(slot)
        let entry = slots[slot]!
        slots[slot] = nil
        freeSlots.append(slot)
        bytes -= entry.bytes
        return entry.value
    }

    /// Changes the value of `key` in place, if there is one; its bytes and its place stay.
    public mutating func update(_ key: Key, _ change: (inout Value) -> Void) {
        guard let slot = slotOfKey[key] else { return }
        change(&slots[slot]!.value)
    }

    public mutating func removeAll() {
        self = LeastRecentlyUsed(maxBytes: maxBytes, maxEntries: maxEntries)
    }

    private mutating func unlink(_ slot: Int) {
        let (newer, older) = (slots[slot]!.newer, slots[slot]!.older)
        if let newer { slots[newer]!.older = older } else { newest = older }
        if let older { slots[older]!.newer = newer } else { oldest = newer }
    }

    private mutating func linkAsNewest(_ slot: Int) {
        slots[slot]!.newer = nil
        slots[slot]!.older = newest
        if let newest { slots[newest]!.newer = slot } else { oldest = slot }
        newest = slot
    }
}
