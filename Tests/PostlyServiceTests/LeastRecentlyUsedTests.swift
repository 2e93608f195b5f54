import PostlyService
import Testing

/// The bounded cache every service keeps: what it evicts, in what order, and its bounds.
@Suite struct LeastRecentlyUsedTests {
    @Test func theLeastRecentlyUsedGoFirst() {
        var cache = LeastRecentlyUsed<String, Int>(maxBytes: 30)
        for (number, key) in ["a", "b", "c"].enumerated() { cache.insert(number, bytes: 10, for: key) }
        #expect(cache.value(of: "a") == 0)  // now the most recently used
        let evicted = cache.insert(3, bytes: 10, for: "d")
        #expect(evicted.map(\.key) == ["b"])
        #expect(cache.peek("b") == nil)
        #expect(cache.peek("a") == 0 && cache.peek("c") == 2 && cache.peek("d") == 3)
        #expect(cache.bytes == 30)
    }

    @Test func bothBoundsHoldAndAValueOverTheByteBoundIsNotStored() {
        var cache = LeastRecentlyUsed<Int, String>(maxBytes: 100, maxEntries: 3)
        for key in 0..<5 { cache.insert("small", bytes: 1, for: key) }
        #expect(cache.count == 3)
        #expect(cache.peek(1) == nil && cache.peek(2) == "small")
        #expect(cache.insert("large", bytes: 99, for: 9).map(\.key).sorted() == [2, 3])
        #expect(cache.bytes == 100)
        #expect(cache.insert("too large", bytes: 101, for: 4).isEmpty)
        #expect(cache.peek(4) == nil, "the old value of a key stored too large is gone")
        #expect(cache.count == 1)
    }

    @Test func replacingAndUpdatingKeepTheBytesRight() {
        var cache = LeastRecentlyUsed<String, String>(maxBytes: 50)
        cache.insert("one", bytes: 20, for: "a")
        cache.insert("two", bytes: 30, for: "a")
        #expect(cache.bytes == 30 && cache.count == 1)
        cache.update("a") { $0 += "!" }
        #expect(cache.peek("a") == "two!")
        #expect(cache.removeValue(forKey: "a") == "two!")
        #expect(cache.bytes == 0 && cache.count == 0)
        cache.insert("three", bytes: 50, for: "b")
        cache.removeAll()
        #expect(cache.bytes == 0 && cache.peek("b") == nil)
    }

    /// Random reads, stores and removals against a list kept in order of use: the same values,
    /// the same evictions, every bound held, and freed slots used again.
    @Test func itBehavesAsAListInOrderOfUse() {
        var cache = LeastRecentlyUsed<Int, Int>(maxBytes: 200, maxEntries: 12)
        var model: [(key: Int, value: Int, bytes: Int)] = []  // the most recently used last
        var random: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next(_ bound: Int) -> Int {
            random = random &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((random >> 33) % UInt64(bound))
        }
        for step in 0..<20_000 {
            let key = next(30)
            switch next(4) {
            case 0:
                let found = model.firstIndex { $0.key == key }
                #expect(cache.value(of: key) == found.map { model[$0].value }, "step \(step)")
                if let found { model.append(model.remove(at: found)) }
            case 1:
                #expect(cache.removeValue(forKey: key) == model.first { $0.key == key }?.value, "step \(step)")
                model.removeAll { $0.key == key }
            default:
                let bytes = 1 + next(40)
                model.removeAll { $0.key == key }
                var expected: [Int] = []
                while !model.isEmpty, model.reduce(bytes, { $0 + $1.bytes }) > 200 || model.count >= 12 {
                    expected.append(model.removeFirst().key)
                }
                model.append((key, step, bytes))
                #expect(cache.insert(step, bytes: bytes, for: key).map(\.key) == expected, "step \(step)")
            }
            #expect(cache.count == model.count && cache.bytes == model.reduce(0) { $0 + $1.bytes })
        }
    }
}
