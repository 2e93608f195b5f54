import NIOPosix

/// A COMMIT that went out and was never answered (its connection lost, or its server silent
/// past the answer timeout) may have committed or not. When one of the transaction's statements
/// returned its id, the server is asked, on a connection of its own, what became of it: a
/// write that committed answers as such instead of 503, and one that did not is run again, so
/// a client retrying the 503 cannot write twice.
///
/// An id the server never recorded (the transaction's WAL lost in a crash, or not replicated
/// before a failover) may be handed out again: the transaction that gets it then answers for
/// ours. So a commit is believed only with its evidence, a row that only it can have written.
enum LostCommit {
    enum Outcome {
        case committed, rolledBack, unknown
    }

    /// How long the server is asked: a transaction whose backend has not read its COMMIT yet
    /// (a server busy or paused for a moment) is still in progress.
    static let patience = Duration.seconds(5)
    /// The longest each answer is waited for, so the question ends soon after `patience` even
    /// when the server does not answer it.
    static let answerTimeout = Duration.seconds(2)

    static func outcome(
        of transaction: OpenTransaction.Identity, configuration: PostgresConfiguration, threadPool: NIOThreadPool
    ) async -> Outcome {
        var configuration = configuration
        configuration.answerTimeout = answerTimeout
        let connection = PostgresConnection(configuration: configuration)
        defer { connection.close() }
        func ask(_ sql: SQL, _ column: String) async throws -> String {
            try await threadPool.runBlocking { try connection.run(sql).rows?.rows.first?.decode(column, as: String.self) ?? "" }
        }
        let deadline = ContinuousClock.now + patience
        while ContinuousClock.now < deadline {
            do {
                // NULL: too old to tell (not for an id that was ours a moment ago).
                switch try await ask("SELECT coalesce(pg_xact_status(\(transaction.id)::xid8), 'forgotten') AS status", "status") {
                case "committed":
                    return try await ask(transaction.evidence, "present") == "true" ? .committed : .unknown
                case "aborted": return .rolledBack
                case "forgotten": return .unknown
                default: break  // in progress
                }
            } catch DatabaseError.server(sqlState: "22023", _) {
                // "In the future": the server never recorded the id, so nothing of it committed.
                return .rolledBack
            } catch {
                // The server not reachable yet (restarting): asked again.
            }
            do { try await Task.sleep(for: .milliseconds(200)) } catch { return .unknown }
        }
        return .unknown
    }
}
