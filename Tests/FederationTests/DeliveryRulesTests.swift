import Foundation
import Logging
import PostlyCurl
import PostlyService
import Testing
import TestSupport

@testable import FederationService

/// The rules of delivery that are pure logic: Mastodon's retry schedule and which answers end
/// a delivery for good, which addresses count as public, how handles are made.
@Suite struct DeliveryRulesTests {
    @Test func retriesFollowMastodonsScheduleThenGiveUp() {
        let policy = RetryPolicy(base: .seconds(60))
        let now = Date(timeIntervalSince1970: 0)
        let delays = (1...8).map { policy.retryAt(afterAttempts: $0, retryAfter: nil, now: now)!.timeIntervalSince(now) }
        #expect(delays == [60, 300, 1800, 7200, 21600, 43200, 86400, 86400])
        #expect(delays.reduce(0, +) / 86400 > 2.7)  // about three days in all
        #expect(policy.retryAt(afterAttempts: 9, retryAfter: nil, now: now) == nil)
        // A test base keeps the proportions.
        #expect(RetryPolicy(base: .milliseconds(100)).retryAt(afterAttempts: 2, retryAfter: nil, now: now)!.timeIntervalSince(now) == 0.5)
    }

    @Test func retryAfterIsHonouredWhenLonger() {
        let policy = RetryPolicy(base: .seconds(60))
        let now = Date(timeIntervalSince1970: 1_000_000)
        #expect(policy.retryAt(afterAttempts: 1, retryAfter: 600, now: now)!.timeIntervalSince(now) == 600)
        #expect(policy.retryAt(afterAttempts: 1, retryAfter: 5, now: now)!.timeIntervalSince(now) == 60)
        #expect(RetryPolicy.retryAfter("120", now: now) == 120)
        #expect(RetryPolicy.retryAfter(HTTPDate.format(now.addingTimeInterval(30)), now: now) == 30)
        #expect(RetryPolicy.retryAfter("soon", now: now) == nil)
    }

    @Test func permanentAnswersAreThoseMastodonGivesUpOn() {
        #expect([400, 403, 404, 410, 422, 501].allSatisfy(RetryPolicy.isPermanent))
        #expect(![401, 408, 429, 500, 502, 503].contains(where: RetryPolicy.isPermanent))
    }

    @Test func loopbackAndPrivateAddressesAreNotPublic() {
        for address in ["127.0.0.1", "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0",
            "224.0.0.1", "::1", "::", "fc00::1", "fd12::1", "fe80::1", "::ffff:127.0.0.1", "::ffff:10.0.0.1", "64:ff9b::a00:1", "not an address"]
        {
            #expect(!PublicAddress.isPublic(address), "\(address)")
        }
        for address in ["93.184.216.34", "172.32.0.1", "8.8.8.8", "2606:4700::1111", "::ffff:8.8.8.8"] {
            #expect(PublicAddress.isPublic(address), "\(address)")
        }
    }

    @Test func outboundRequestsToPrivateAddressesAreRefusedUnlessAllowed() async throws {
        let client = CurlHTTPClient(logger: Logger(label: "federation-tests"))
        let strict = OutboundHTTP(client: client, allowPrivateNetworks: false, timeout: .seconds(1))
        await #expect(throws: OutboundError.privateAddress("127.0.0.1")) { try await strict.pinnedAddress(of: "http://127.0.0.1:8080/inbox") }
        await #expect(throws: OutboundError.privateAddress("localhost")) { try await strict.pinnedAddress(of: "http://localhost/inbox") }
        await #expect(throws: OutboundError.invalidURL) { try await strict.pinnedAddress(of: "file:///etc/passwd") }
        let lenient = OutboundHTTP(client: client, allowPrivateNetworks: true, timeout: .seconds(1))
        #expect(try await lenient.pinnedAddress(of: "http://127.0.0.1:8080/inbox") == [])
    }

    /// A name server that never answers holds a lookup until its deadline, and no more than
    /// the limit wait; the rest are refused at once. A name whose lookup never ran is `busy`,
    /// not a name without addresses: slow name servers of other hosts made it count as its
    /// host's failure. (It held NIO's pool, where the Kafka commits run, as long as it liked.)
    @Test func aHangingLookupHasNoAddressAtItsDeadlineAndThoseBehindItAreBusy() async throws {
        let resolver = HostResolver(threads: 1, timeout: .milliseconds(200), pendingLimit: 2) { host in
            if host == "hangs.example" { Thread.sleep(forTimeInterval: 2) }
            return ["198.51.100.7"]
        }
        let started = ContinuousClock.now
        #expect(await resolver.addresses(of: "hangs.example") == .addresses([]))
        #expect(started.duration(to: .now) < .seconds(1))
        // The hanging lookup still holds the one thread: one more may wait for it, not two.
        async let queued = resolver.addresses(of: "waits.example")
        try await Task.sleep(for: .milliseconds(50))
        let refused = ContinuousClock.now
        #expect(await resolver.addresses(of: "refused.example") == .busy)
        #expect(refused.duration(to: .now) < .milliseconds(100))
        #expect(await queued == .busy)
        #expect(await HostResolver().addresses(of: "127.0.0.1") == .addresses(["127.0.0.1"]))
    }

    /// A lookup that starts shortly before the wait ends is `busy`: it had no fair try, and
    /// counting it against its host let other hosts' slow name servers pause healthy ones.
    @Test func aLookupStartedLateIsBusy() async throws {
        let resolver = HostResolver(threads: 1, timeout: .milliseconds(400), pendingLimit: 8) { host in
            Thread.sleep(forTimeInterval: host == "holds.example" ? 0.3 : 2)
            return ["198.51.100.7"]
        }
        async let holding = resolver.addresses(of: "holds.example")
        try await Task.sleep(for: .milliseconds(20))
        #expect(await resolver.addresses(of: "late.example") == .busy)
        #expect(await holding == .addresses(["198.51.100.7"]))
    }

    /// Deliveries to one host whose name server hangs share one lookup, on one thread: they
    /// held every thread, and another host's lookup found none free before its deadline.
    @Test func lookupsOfOneHangingNameHoldOneThread() async throws {
        let lookups = Locked<[String]>([])
        let resolver = HostResolver(threads: 2, timeout: .milliseconds(500), pendingLimit: 8) { host in
            lookups.withLock { $0.append(host) }
            if host == "hangs.example" { Thread.sleep(forTimeInterval: 2) }
            return ["198.51.100.7"]
        }
        async let hanging = withTaskGroup(of: HostResolver.Answer.self) { group in
            for _ in 0..<5 { group.addTask { await resolver.addresses(of: "hangs.example") } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        try await Task.sleep(for: .milliseconds(50))
        #expect(await resolver.addresses(of: "answers.example") == .addresses(["198.51.100.7"]))
        #expect(await hanging == Array(repeating: .addresses([]), count: 5))
        #expect(lookups.value.filter { $0 == "hangs.example" }.count == 1)
    }

    @Test func handlesAreFoldedAndShort() {
        #expect(Handle.base(from: "Crème Brûlée") == "creme_brulee")
        #expect(Handle.base(from: "Ada Lovelace") == "ada_lovelace")
        #expect(Handle.base(from: "李") == "user")
        #expect(Handle.base(from: String(repeating: "abc ", count: 20)).count <= 30)
        #expect(Handle.candidate("ada_lovelace", attempt: 2) == "ada_lovelace_2")
        #expect(Handle.candidate(String(repeating: "a", count: 30), attempt: 12).count == 30)
    }
}
