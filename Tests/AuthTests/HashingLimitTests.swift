import Foundation
import HTTPTypes
import PostlyService
import Testing
import TestSupport

@testable import AuthService

/// Password hashes are expensive on purpose: a flood of sign-ins must not take every core.
@Suite struct HashingLimitTests {
    @Test func atMostTheConfiguredHashesRunAtOnce() async throws {
        let queue = HashingQueue(concurrent: 2, waiting: 100)
        let counts = Locked((running: 0, most: 0))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<20 {
                group.addTask {
                    try await queue.run {
                        counts.withLock { $0.running += 1; $0.most = max($0.most, $0.running) }
                        try await Task.sleep(for: .milliseconds(5))
                        counts.withLock { $0.running -= 1 }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(counts.value.most == 2)
    }

    /// One hash at a time and one waiting: of six registrations at once, those that find the
    /// queue full answer 503 with Retry-After at once; the others are created.
    @Test func signInsBeyondTheQueueAnswer503() async throws {
        try await AuthTestHarness.run(configure: {
            $0.bcryptCost = 10
            $0.hashesAtOnce = 1
            $0.hashesWaiting = 1
        }) { auth async throws in
            let answers = try await withThrowingTaskGroup(of: (HTTPResponse.Status, String?).self) { group in
                for index in 0..<6 {
                    group.addTask {
                        let response = try await auth.register(email: "flood\(index)@example.com")
                        return (response.status, response.headers[.retryAfter])
                    }
                }
                return try await group.reduce(into: [(HTTPResponse.Status, String?)]()) { $0.append($1) }
            }
            let refused = answers.filter { $0.0 == .serviceUnavailable }
            #expect(!refused.isEmpty, "\(answers.map(\.0))")
            #expect(refused.allSatisfy { $0.1 == "1" })
            #expect(answers.allSatisfy { $0.0 == .serviceUnavailable || $0.0 == .created }, "\(answers.map(\.0))")
            #expect(try await auth.register(email: "after@example.com").status == .created, "the queue drains")
        }
    }
}
