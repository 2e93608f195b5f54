import Foundation
import Synchronization

/// One stopped PostgreSQL backend of the test server (which runs on this machine), resumed by
/// `resumeAndWaitForItsEnd` or a while (10 s unless told) after it was stopped: a server frozen
/// with its connections alive, as a paused container or a volume hung during a commit's flush.
public final class FrozenBackend: Sendable {
    public struct NotABackend: Error {
        public let pid: pid_t
    }

    private let state = Mutex<(pid: pid_t?, timer: Task<Void, Never>?)>((nil, nil))

    public init() {}

    public func stop(_ pid: pid_t, resumingAfter delay: Duration = .seconds(10)) throws {
        // Only ever a PostgreSQL process of this machine's test server.
        let command = try String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8)
        guard command.hasPrefix("postgres"), kill(pid, SIGSTOP) == 0 else { throw NotABackend(pid: pid) }
        let timer = Task {
            guard (try? await Task.sleep(for: delay)) != nil else { return }
            kill(pid, SIGCONT)
        }
        state.withLock { $0 = (pid, timer) }
    }

    /// Resumes the backend, which ends once it finds its client gone.
    public func resumeAndWaitForItsEnd() async {
        let (pid, timer) = state.withLock { $0 }
        timer?.cancel()
        guard let pid else { return }
        kill(pid, SIGCONT)
        _ = try? await eventually { kill(pid, 0) != 0 }
    }
}
