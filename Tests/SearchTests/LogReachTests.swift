import Testing

@testable import SearchService

/// The follower reads on from its position only while no change it has yet to read can have
/// been forgotten by the log.
struct LogReachTests {
    private let start = ContinuousClock.now

    @Test func aFollowerThatReachesTheEndReadsOn() {
        var reach = LogReach(kept: .seconds(3600), now: start)
        for minute in 1...120 {
            reach.looked(at: start + .seconds(60 * minute), reachedEnd: true)
            #expect(reach.mayReadOn(at: start + .seconds(60 * minute + 30)))
        }
    }

    /// A backlog read part by part for longer than half the log's age: its tail may have been
    /// pruned, so the follower loads everything instead of skipping what was forgotten.
    @Test func aFollowerStillReadingABacklogAfterHalfTheLogsAgeLoadsEverything() {
        var reach = LogReach(kept: .seconds(3600), now: start)
        for minute in 1...29 {
            reach.looked(at: start + .seconds(60 * minute), reachedEnd: false)
            #expect(reach.mayReadOn(at: start + .seconds(60 * minute + 30)))
        }
        reach.looked(at: start + .seconds(60 * 31), reachedEnd: false)
        #expect(!reach.mayReadOn(at: start + .seconds(60 * 31)))
        // A load reaches the end.
        reach.looked(at: start + .seconds(60 * 32), reachedEnd: true)
        #expect(reach.mayReadOn(at: start + .seconds(60 * 32)))
    }

    @Test func aFollowerThatCouldNotLookForHalfTheLogsAgeLoadsEverything() {
        let reach = LogReach(kept: .seconds(3600), now: start)
        #expect(reach.mayReadOn(at: start + .seconds(1799)))
        #expect(!reach.mayReadOn(at: start + .seconds(1800)))
    }
}
