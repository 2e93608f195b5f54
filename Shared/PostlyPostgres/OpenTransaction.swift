import Synchronization

/// What a transaction gathers on its way for its end: the signals it delivers when it commits,
/// and its id on the server once a statement returned it (`DatabaseConnection.noteTransactionId`),
/// which settles a COMMIT whose answer was lost (`LostCommit`).
final class OpenTransaction: Sendable {
    private let state = Mutex<(signals: Set<CommitSignals.Signal>, id: String?)>(([], nil))

    func add(_ signal: CommitSignals.Signal) {
        state.withLock { _ = $0.signals.insert(signal) }
    }

    var signals: Set<CommitSignals.Signal> { state.withLock { $0.signals } }

    var id: String? {
        get { state.withLock { $0.id } }
        set { state.withLock { $0.id = newValue } }
    }
}
