/// Whether the follower may read on from its position in the change log, which forgets a
/// change after `kept`: only when it reached the log's end within half that. A follower reading
/// a backlog part by part has not reached it, and the part it has yet to read may be forgotten
/// under it; then it loads everything again.
struct LogReach {
    let kept: Duration
    private var reachedEnd: ContinuousClock.Instant

    init(kept: Duration, now: ContinuousClock.Instant) {
        self.kept = kept
        reachedEnd = now
    }

    func mayReadOn(at now: ContinuousClock.Instant) -> Bool {
        now - reachedEnd < kept / 2
    }

    /// A look that started at `instant` (a load, or a read of changes) succeeded; `reachedEnd`
    /// when nothing was left to read after it.
    mutating func looked(at instant: ContinuousClock.Instant, reachedEnd: Bool) {
        if reachedEnd { self.reachedEnd = instant }
    }
}
