import NIOPosix

/// A COMMIT that went out and was never answered (its connection lost, or its server silent
/// past the answer timeout) may have committed or not. When one of the transaction's statements
/// returned its id, the server is asked, on a connection of its own, what became of it: a
/// write that committed answers as such instead of 503, and one that rolled back is run again,
/// so a client retrying the 503 cannot write twice.
enum LostCommit {
    enum Outcome {
        case committed, rolledBack, unknown
    }

    /// How long the server is asked: a transaction whose backend has not read its COMMIT yet
    /// (a server busy or paused for a moment) is still in progress.
    static let patience = Duration.seconds(5)
    /// The longest each answer is waited for, so the question ends within about `patience`
    /// even when the server does not answer it.
    static let answerTimeout = Duration.seconds(2)

    static func outcome(
        ofTransaction id: String, configuration: PostgresConfiguration, threadPool: NIOThreadPool
    ) async -> Outcome {
        var configuration = configuration
        configuration.answerTimeout = min(configuration.answerTimeout ?? answerTimeout, answerTimeout)
        let connection = PostgresConnection(configuration: configuration)
        defer { connection.close() }
        let deadline = ContinuousClock.now + patience
        while ContinuousClock.now < deadline {
            // NULL: too old to tell (not for an id that was ours a moment ago).
            let status = try? await threadPool.runBlocking {
                try connection.run("SELECT coalesce(pg_xact_status(\(id)::xid8), 'forgotten') AS status").rows?.rows.first?.decode("status", as: String.self)
            }
            switch status {
            case "committed": return .committed
            case "aborted": return .rolledBack
            case "forgotten": return .unknown
            // In progress, or the server not reachable yet (restarting).
            default: try? await Task.sleep(for: .milliseconds(200))
            }
        }
        return .unknown
    }
}
