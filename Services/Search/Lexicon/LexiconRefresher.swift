import Logging
import PostlyPostgres
import ServiceLifecycle

/// Keeps `Lexicon` current with the `lexicon` table: loads it whole at start and every
/// `fullLoadInterval`, and what was added since in between, every `interval`. A word is
/// needed here only for typos and prefixes; exact words are found without it.
struct LexiconRefresher: Service {
    let lexicon: Lexicon
    let database: Database
    let logger: Logger
    var interval: Duration = .milliseconds(200)
    var fullLoadInterval: Duration = .seconds(300)

    func run() async throws {
        var lastFullLoad = ContinuousClock.now
        try? await loadAll()
        while !Task.isCancelled, !Task.isShuttingDownGracefully {
            do {
                try await Task.sleep(for: interval)
            } catch {
                return
            }
            do {
                if ContinuousClock.now - lastFullLoad > fullLoadInterval {
                    try await loadAll()
                    lastFullLoad = .now
                } else {
                    try await loadNew()
                }
            } catch {
                logger.debug("could not refresh the lexicon", metadata: ["error": "\(error)"])
            }
        }
    }

    func loadAll() async throws {
        var words = LexiconWords()
        var upTo: Int64 = 0
        while true {
            let (batch, last) = try await load(after: upTo)
            guard let last else { break }
            words.insert(batch)
            upTo = last
        }
        lexicon.replace(with: words, upTo: upTo)
    }

    func loadNew() async throws {
        while true {
            let (batch, last) = try await load(after: lexicon.loadedUpTo)
            guard let last else { return }
            lexicon.add(batch, upTo: last)
        }
    }

    private func load(after added: Int64) async throws -> (words: [String], last: Int64?) {
        let rows = try await database.query(
            "SELECT word, added FROM lexicon WHERE added > \(added) ORDER BY added LIMIT 50000")
        return (try rows.map { try $0.decode("word", as: String.self) }, try rows.last?.decode("added", as: Int64.self))
    }
}
