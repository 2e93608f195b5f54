import Foundation
import JWTKit
import PostlyService
import Synchronization
import Testing

/// The key-set cache's policy, with a fetch the test controls (the Google sign-in tests run
/// it against a real issuer over HTTP).
@Suite struct JWKSCacheTests {
    /// RFC 8037's Ed25519 public key.
    static let key = #"{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo","kid":"k1"}"#

    /// Keys past their lifetime answer at once while they are fetched again behind: a fetch
    /// that hung (an issuer stalled) held every sign-in until it timed out.
    @Test func staleKeysAnswerAtOnceWhileAHangingFetchRuns() async throws {
        let jwk = try JSONDecoder().decode(JWK.self, from: Data(Self.key.utf8))
        let fetches = Atomic(0)
        let cache = JWKSCache(lifetime: .milliseconds(200), unknownKeyRefetchInterval: .milliseconds(100)) {
            // The second fetch hangs, as curl does until its timeout.
            if fetches.add(1, ordering: .relaxed).oldValue > 0 { try await Task.sleep(for: .seconds(2)) }
            return [jwk]
        }
        #expect(try await cache.keys(for: "k1") != nil)
        try await Task.sleep(for: .milliseconds(250))
        for _ in 0..<3 {
            let started = ContinuousClock.now
            #expect(try await cache.keys(for: "k1") != nil)
            #expect(started.duration(to: .now) < .milliseconds(500))
        }
        let deadline = ContinuousClock.now + .seconds(1)
        while fetches.load(ordering: .relaxed) < 2, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(fetches.load(ordering: .relaxed) == 2, "one fetch behind, however many asked")
    }
}
