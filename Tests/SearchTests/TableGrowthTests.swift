import Testing

@testable import SearchService

/// When an index is loaded again because its tables outgrew the load.
struct TableGrowthTests {
    /// As many new numbers as the load numbered (at least the least allowance), times 1 to 1.5:
    /// instances that follow the same changes do not all load at the same one.
    @Test func anIndexHasOutgrownItsLoadOnceItsTablesDoubled() {
        let allowances = (0..<200).map { _ in
            let growth = TableGrowth(numberedAtLoad: 1_000, loadedIn: .zero, minimumAllowance: 10, minimumGap: .zero)
            #expect(!growth.isOutgrown(numbered: 2_000))
            #expect(growth.isOutgrown(numbered: 2_501))
            return growth.allowance
        }
        #expect(Set(allowances).count > 1)
        let small = TableGrowth(numberedAtLoad: 10, loadedIn: .zero, minimumAllowance: 1_000, minimumGap: .zero)
        #expect(!small.isOutgrown(numbered: 1_010))
        #expect(small.isOutgrown(numbered: 1_511))
    }

    /// Loads are ten times their duration apart, and at least the least gap: an author saving a
    /// long post of new words again and again cannot keep an instance loading.
    @Test func aLoadIsNotFollowedByAnotherTooSoon() {
        let start = ContinuousClock.now
        let slow = TableGrowth(numberedAtLoad: 100, loadedIn: .seconds(70), minimumAllowance: 10, minimumGap: .seconds(60))
        #expect(!slow.isOutgrown(numbered: 1_000, at: start + .seconds(690)))
        #expect(slow.isOutgrown(numbered: 1_000, at: start + .seconds(701)))
        let fast = TableGrowth(numberedAtLoad: 100, loadedIn: .milliseconds(10), minimumAllowance: 10, minimumGap: .seconds(60))
        #expect(!fast.isOutgrown(numbered: 1_000, at: start + .seconds(59)))
        #expect(fast.isOutgrown(numbered: 1_000, at: start + .seconds(61)))
    }
}
