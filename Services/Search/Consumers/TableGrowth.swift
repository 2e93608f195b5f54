/// Whether an index has outgrown its load. Its tables only grow: a text edited or deleted, an
/// author renamed, leaves its tokens and lexemes behind, and only a load numbers everything
/// afresh. So the index is loaded again once its tables have numbered, since the load, as many
/// as the load did (and at least `minimumAllowance`), times a factor of 1 to 1.5 drawn per load
/// (so instances following the same changes do not all load at once); and no sooner than ten
/// times the load's duration after it (and `minimumGap`), so a stream of new words cannot keep
/// an instance loading.
struct TableGrowth {
    let numberedAtLoad: Int
    let allowance: Int
    let notBefore: ContinuousClock.Instant

    init(numberedAtLoad: Int, loadedIn duration: Duration, minimumAllowance: Int, minimumGap: Duration) {
        self.numberedAtLoad = numberedAtLoad
        allowance = Int(Double(max(numberedAtLoad, minimumAllowance)) * Double.random(in: 1...1.5))
        notBefore = .now + max(duration * 10, minimumGap)
    }

    func isOutgrown(numbered: Int, at now: ContinuousClock.Instant = .now) -> Bool {
        numbered - numberedAtLoad > allowance && now >= notBefore
    }
}
