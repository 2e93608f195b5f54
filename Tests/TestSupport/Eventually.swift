/// Polls `condition` until it holds or `timeout` passes; the result of the last look.
/// For effects that arrive asynchronously (events, batched writes).
public func eventually(within timeout: Duration = .seconds(20), _ condition: () async throws -> Bool) async throws -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try await Task.sleep(for: .milliseconds(50))
    }
    return try await condition()
}
