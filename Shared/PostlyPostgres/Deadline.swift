/// The shorter of `timeout` and what is left until `deadline` (none when it has passed); nil,
/// no limit, when neither is set.
func limited(_ timeout: Duration?, by deadline: ContinuousClock.Instant?) -> Duration? {
    guard let deadline else { return timeout }
    let left = max(.zero, ContinuousClock.now.duration(to: deadline))
    return min(timeout ?? left, left)
}
