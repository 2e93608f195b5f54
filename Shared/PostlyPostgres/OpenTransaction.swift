import Synchronization

/// What a transaction gathers on its way for its end: the signals it delivers when it commits,
/// and what settles a COMMIT whose answer was lost (`LostCommit`), once a statement returned it
/// (`DatabaseConnection.noteTransactionId`).
final class OpenTransaction: Sendable {
    /// The transaction's id on the server, and a query whose `present` says a row that only
    /// this transaction can have written is there.
    struct Identity: Sendable {
        var id: String
        var evidence: SQL
    }

    private let state = Mutex<(signals: Set<CommitSignals.Signal>, identity: Identity?)>(([], nil))

    func add(_ signal: CommitSignals.Signal) {
        state.withLock { _ = $0.signals.insert(signal) }
    }

    var signals: Set<CommitSignals.Signal> { state.withLock { $0.signals } }

    var identity: Identity? {
        get { state.withLock { $0.identity } }
        set { state.withLock { $0.identity = newValue } }
    }
}
