import Testing

@testable import SearchService

/// The contents searches keep: found by post and version, within their bound, the ones searched
/// again kept longest.
@Suite struct ContentCacheTests {
    let content = [UInt8](repeating: UInt8(ascii: "a"), count: 100)

    @Test func aContentIsFoundByItsPostAndVersionOnly() {
        let cache = ContentCache(bytes: 1_000)
        cache.insert(content, for: .init(postId: "p1", version: 2))
        #expect(cache.content(of: .init(postId: "p1", version: 2)) == content)
        #expect(cache.content(of: .init(postId: "p1", version: 3)) == nil, "an edit made since")
        #expect(cache.content(of: .init(postId: "p2", version: 2)) == nil)
    }

    @Test func itHoldsNoMoreThanItsBoundAndKeepsWhatIsSearchedAgain() {
        let cache = ContentCache(bytes: 1_000)
        for number in 0..<30 {
            cache.insert(content, for: .init(postId: "p\(number)", version: 1))
            // The first post is searched all along.
            #expect(cache.content(of: .init(postId: "p0", version: 1)) == content, "after \(number + 1) posts")
            #expect(cache.size <= 1_000)
        }
        #expect(cache.content(of: .init(postId: "p1", version: 1)) == nil, "searched once, long ago")
        #expect(cache.content(of: .init(postId: "p29", version: 1)) == content)
    }
}
