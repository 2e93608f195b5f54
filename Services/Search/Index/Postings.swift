import BitCollections

/// The posts (by slot) that hold one lexeme, or that one author wrote: a sorted array while
/// few do, a bitmap once many do, as the containers of a roaring bitmap (4 bytes a post
/// against a bit for every slot of the index).
struct Postings: Sendable {
    private enum Storage {
        case sorted([UInt32])
        case bitmap(BitSet)
    }

    private var storage = Storage.sorted([])
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    /// The bytes kept (about), for the memory estimate.
    var size: Int {
        switch storage {
        case .sorted(let members): members.capacity * 4
        case .bitmap(let bits): ((bits.last ?? 0) + 8) / 8
        }
    }

    /// Adds `slot`. `slots` is the number of slots of the index, which decides the layout.
    mutating func insert(_ slot: UInt32, slots: Int) {
        switch storage {
        case .bitmap(var bits):
            storage = .sorted([])  // `bits` is the only reference while it changes
            if bits.insert(Int(slot)).inserted { count += 1 }
            storage = .bitmap(bits)
        case .sorted(var members):
            storage = .sorted([])
            if let last = members.last, last < slot {
                members.append(slot)
            } else {
                let index = Self.lowerBound(of: slot, in: members)
                if index < members.count, members[index] == slot {
                    storage = .sorted(members)
                    return
                }
                members.insert(slot, at: index)
            }
            count += 1
            storage = count >= Self.bitmapMinimum && count * 32 > slots ? .bitmap(BitSet(members.lazy.map(Int.init))) : .sorted(members)
        }
    }

    mutating func remove(_ slot: UInt32, slots: Int) {
        switch storage {
        case .bitmap(var bits):
            storage = .sorted([])
            if bits.remove(Int(slot)) != nil { count -= 1 }
            // Back to an array well below the point where it became a bitmap, so that a post
            // going back and forth does not switch the layout each time.
            storage = count * 128 < slots ? .sorted(bits.map(UInt32.init)) : .bitmap(bits)
        case .sorted(var members):
            let index = Self.lowerBound(of: slot, in: members)
            guard index < members.count, members[index] == slot else { return }
            storage = .sorted([])
            members.remove(at: index)
            count -= 1
            storage = .sorted(members)
        }
    }

    /// Adds these posts to `set`.
    func add(to set: inout BitSet) {
        switch storage {
        case .bitmap(let bits): set.formUnion(bits)
        case .sorted(let members): for slot in members { set.insert(Int(slot)) }
        }
    }

    private static let bitmapMinimum = 64

    private static func lowerBound(of slot: UInt32, in members: [UInt32]) -> Int {
        var low = 0, high = members.count
        while low < high {
            let middle = (low + high) / 2
            if members[middle] < slot { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
