import Synchronization

/// How many key documents this instance fetches from one server a minute. A request names its
/// key by URL and anyone may send one: without a bound, every unknown key id cost a fetch from
/// a server of the sender's choosing, as fast as requests came.
final class KeyFetchBudget: Sendable {
    private struct Window {
        var start: ContinuousClock.Instant
        var fetches: Int
    }

    static let window = Duration.seconds(60)
    let perWindow: Int
    private let windows = Mutex<[String: Window]>([:])

    init(perWindow: Int = 30) {
        self.perWindow = perWindow
    }

    /// Takes one fetch from `host`'s budget; false when this minute's is spent.
    func take(host: String, now: ContinuousClock.Instant = .now) -> Bool {
        windows.withLock { windows in
            if windows.count > 10_000 { windows = windows.filter { now - $0.value.start < Self.window } }
            var window = windows[host].flatMap { now - $0.start < Self.window ? $0 : nil } ?? Window(start: now, fetches: 0)
            guard window.fetches < perWindow else { return false }
            window.fetches += 1
            windows[host] = window
            return true
        }
    }
}
