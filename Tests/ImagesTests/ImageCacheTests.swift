import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing
import TestSupport

@testable import ImagesService

/// One upstream call per question while its answer is fresh, however many ask at once, in a
/// cache that stays within its bounds.
@Suite struct ImageCacheTests {
    @Test func oneHundredConcurrentIdenticalRequestsMakeOneUpstreamCall() async throws {
        let pexels = FakePexels()
        pexels.answer { $0.delay = .milliseconds(300) }
        try await ImagesTestService.run(pexels: pexels) { service, client in
            let token = try await service.token()
            let bodies = try await withThrowingTaskGroup(of: (HTTPResponse.Status, String).self) { group in
                for index in 0..<100 {
                    // The same question in different spellings.
                    let spelling = index.isMultiple(of: 2) ? "Sunset Beach" : "  sunset   BEACH"
                    group.addTask {
                        let response = try await client.search(spelling, token: token)
                        return (response.status, response.text)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(bodies.count == 100)
            #expect(bodies.allSatisfy { $0.0 == .ok })
            #expect(Set(bodies.map(\.1)).count == 1)
            #expect(pexels.callCount == 1)
            #expect(service.metric("images_upstream_calls_total{status=\"200\"}") == 1)
            let waited = service.metric("images_coalesced_waits_total") ?? 0
            let hits = service.metric("images_cache_hits_total") ?? 0
            #expect(waited + hits == 99)
        }
    }

    @Test func aRepeatWithinTheTTLCallsNothingAndAfterItCallsAgain() async throws {
        let pexels = FakePexels()
        try await ImagesTestService.run(pexels: pexels, environment: ["IMAGES_CACHE_TTL_SECONDS": "600"]) { service, client in
            let token = try await service.token()
            let first = try await client.search("forest", token: token)
            service.clock.advance(by: 599)
            let repeated = try await client.search("Forest", token: try await service.token())
            #expect(repeated.status == .ok)
            #expect(repeated.text == first.text)
            #expect(!repeated.isStale)
            #expect(pexels.callCount == 1)
            #expect(service.metric("images_cache_hits_total") == 1)
            #expect(service.metric("images_cache_misses_total") == 1)

            // Another page or page size is another question.
            #expect(try await client.search("forest", token: token, extra: "&per_page=12").status == .ok)
            #expect(try await client.search("forest", token: token, extra: "&page=2").status == .ok)
            #expect(pexels.callCount == 3)

            service.clock.advance(by: 2)
            #expect(try await client.search("forest", token: token).status == .ok)
            #expect(pexels.callCount == 4)
        }
    }

    @Test func theCacheNeverHoldsMoreEntriesThanItsBound() async throws {
        let pexels = FakePexels()
        try await ImagesTestService.run(pexels: pexels, environment: ["IMAGES_CACHE_MAX_ENTRIES": "3"]) { service, client in
            let token = try await service.token()
            for query in ["one", "two", "three", "four", "five"] {
                #expect(try await client.search(query, token: token).status == .ok)
                #expect((service.metric("images_cache_entries") ?? 99) <= 3)
            }
            #expect(service.metric("images_cache_entries") == 3)
            // The least recently used went first: "five" is cached, "one" is asked again.
            #expect(try await client.search("five", token: token).status == .ok)
            #expect(pexels.callCount == 5)
            #expect(try await client.search("one", token: token).status == .ok)
            #expect(pexels.callCount == 6)
        }
    }

    @Test func theCacheNeverHoldsMoreBytesThanItsBound() async throws {
        let pexels = FakePexels()
        // A page of 10 photos is about 8 KB: 20 KB hold two of them.
        let maxBytes = 20_000
        try await ImagesTestService.run(pexels: pexels, environment: ["IMAGES_CACHE_MAX_BYTES": "\(maxBytes)"]) { service, client in
            let token = try await service.token()
            for query in ["one", "two", "three", "four", "five", "six"] {
                #expect(try await client.search(query, token: token, extra: "&per_page=10").status == .ok)
                #expect((service.metric("images_cache_bytes") ?? .infinity) <= Double(maxBytes))
            }
            let entries = try #require(service.metric("images_cache_entries"))
            #expect(entries >= 1 && entries < 6)
            // A page larger than the whole cache is answered but not kept.
            #expect(try await client.search("huge", token: token, extra: "&per_page=80").status == .ok)
            #expect(try await client.search("huge", token: token, extra: "&per_page=80").status == .ok)
            #expect(pexels.callCount == 8)
        }
    }

    @Test func evictionFollowsLeastRecentUseWithinBothBounds() {
        let cache = ResponseCache(maxEntries: 3, maxBytes: 3 * (1000 + 1 + ResponseCache.overheadBytes), ttl: .seconds(60))
        let now = Date()
        let body = ByteBuffer(repeating: 0x20, count: 1000)
        for key in ["a", "b", "c"] { cache.store(body, under: key, now: now) }
        #expect(cache.fresh("a", now: now) != nil)
        cache.store(body, under: "d", now: now)
        #expect(cache.usage.entries == 3)
        #expect(cache.any("b") == nil)
        #expect(cache.any("a") != nil)

        cache.store(ByteBuffer(repeating: 0x20, count: 2000), under: "e", now: now)
        #expect(cache.usage.bytes <= cache.maxBytes)
        #expect(cache.any("e") != nil)

        #expect(cache.fresh("e", now: now + 61) == nil)
        #expect(cache.any("e") != nil)
    }
}
