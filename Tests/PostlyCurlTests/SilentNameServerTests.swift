import Foundation
@testable import PostlyCurl
import Testing

/// While the name server does not answer, a call to a name gives up at its timeout and holds no
/// other call back. Runs only where the system resolver was pointed at a name server that never
/// answers: `deploy/check-silent-dns.sh`, from the test command, sets `POSTLY_TEST_SILENT_DNS`.
@Suite(.enabled(if: ProcessInfo.processInfo.environment["POSTLY_TEST_SILENT_DNS"] != nil))
struct SilentNameServerTests {
    @Test func aLookupThatHangsEndsAtItsTimeoutAndHoldsNoOtherCall() async throws {
        try await withServerAndClient(.init(connectTimeout: .seconds(1), timeout: .seconds(1))) { server, client in
            let started = ContinuousClock.now
            async let hung = #expect(throws: CurlError.self) { try await client.execute(.get("http://silent.example/")) }
            // Past the hung call's timeout: libcurl waited here for the lookup, 6 s with this
            // resolver, and held every other transfer meanwhile.
            try await Task.sleep(for: .milliseconds(1_200))
            let response = try await client.execute(.get("\(server.baseURL)/bytes/10"))
            #expect(response.status == 200)
            _ = await hung
            #expect(ContinuousClock.now - started < .seconds(3))
        }
    }
}
