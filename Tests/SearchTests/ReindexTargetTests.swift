import Testing

@testable import SearchService

/// The reindex's waits end when their replay has stopped: after the switch the wait has no idle
/// way out, and a replay stopped by a fatal Kafka error or an interrupted command kept the
/// reindex asking for ever.
struct ReindexTargetTests {
    @Test func aWaitEndsOnceTheReplayStopped() async throws {
        let target = ReindexTarget()
        target.switched()
        let waiting = Task { () async -> (any Error)? in
            do {
                try await target.wait(orIdleFor: nil, firstEventWithin: .zero) { false }
                return nil
            } catch {
                return error
            }
        }
        try await Task.sleep(for: .milliseconds(300))
        target.replayStopped(nil)
        let giveUp = Task {
            try await Task.sleep(for: .seconds(5))
            waiting.cancel()
        }
        let error = await waiting.value
        giveUp.cancel()
        #expect((error as? ReindexTarget.ReplayStopped)?.switched == true, "\(String(describing: error))")
    }
}
