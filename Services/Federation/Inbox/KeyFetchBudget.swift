import Synchronization

/// How many key documents this instance fetches from one server a minute. A request names its
/// key by URL and anyone may send one: without a bound, every unknown key id cost a fetch from
/// a server of the sender's choosing, as fast as requests came.
final class KeyFetchBudget: Sendable {
    private struct Window {
        var start: ContinuousClock.Instant
        var fetches: Int
    }

    private struct State {
        var windows: [String: Window] = [:]
        var pruned: ContinuousClock.Instant?
    }

    static let window = Duration.seconds(60)
    let perWindow: Int
    private let state = Mutex(State())

    init(perWindow: Int = 30) {
        self.perWindow = perWindow
    }

    /// Takes one fetch from `host`'s budget; false when this minute's is spent.
    func take(host: String, now: ContinuousClock.Instant = .now) -> Bool {
        state.withLock { state in
            // Once a window, not on every call, the hosts whose window ended go: what is kept
            // is at most the last two windows' hosts.
            if state.pruned.map({ now - $0 >= Self.window }) ?? true {
                state.windows = state.windows.filter { now - $0.value.start < Self.window }
                state.pruned = now
            }
            var window = state.windows[host].flatMap { now - $0.start < Self.window ? $0 : nil } ?? Window(start: now, fetches: 0)
            guard window.fetches < perWindow else { return false }
            window.fetches += 1
            state.windows[host] = window
            return true
        }
    }
}
