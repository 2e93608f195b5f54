import Logging
import PostlyEvents
import PostlyPostgres
import ServiceLifecycle

/// Keeps `SearchIndex` in this instance's memory: loads it whole from the tables at start,
/// then applies what the change log says changed, whichever instance's consumer wrote it. It
/// looks when the writers notify that a change committed, and every `interval` in case a
/// notification was lost (the listening connection reconnects); so every instance answers a
/// change moments after its commit. After a reindex switched the tables, when changes it has
/// not read may have been pruned (`LogReach`), and when its tables have outgrown the load
/// (`TableGrowth`), it loads everything again (the old index answers meanwhile).
struct IndexFollower: Service {
    let index: SearchIndex
    let database: Database
    let logger: Logger
    var interval: Duration = .seconds(1)
    /// Posts applied under one hold of the index's lock, so searches wait at most that long.
    var postsPerStep = 64
    /// `TableGrowth`'s least allowance (tokens and lexemes) and least time between loads.
    var reloadAfterNewNumbers = 200_000
    var reloadsApart: Duration = .seconds(60)

    func run() async throws {
        let doorbell = Doorbell()
        await withDiscardingTaskGroup { group in
            group.addTask {
                for await _ in database.listen(channel: ChangeLog.channel) { doorbell.ring() }
            }
            await follow(IndexRows(database: database), doorbell: doorbell)
            group.cancelAll()
        }
    }

    private func follow(_ rows: IndexRows, doorbell: Doorbell) async {
        var generation: Int64?
        var growth: TableGrowth?
        var reach = LogReach(kept: ChangeLog.kept, now: .now)
        var lastPruning = ContinuousClock.now
        var backoff = Backoff()
        while !Task.isCancelled, !Task.isShuttingDownGracefully {
            var more = false
            let looked = ContinuousClock.now
            do {
                if let loaded = generation, let position = index.position, let tables = index.tables, reach.mayReadOn(at: looked),
                    growth?.isOutgrown(numbered: tables.count) == false
                {
                    let changes = try await rows.changes(
                        after: position, wordsAfter: index.lexicon.loadedUpTo, stored: index.stored.after(position, generation: loaded),
                        tables: tables)
                    if changes.generation == loaded {
                        apply(changes)
                        more = changes.isPartial
                    } else {
                        (generation, growth) = try await load(rows)
                    }
                } else {
                    (generation, growth) = try await load(rows)
                }
                reach.looked(at: looked, reachedEnd: !more)
                backoff.reset()
                if ContinuousClock.now - lastPruning > ChangeLog.kept / 6 {
                    try await ChangeLog.prune(database)
                    lastPruning = .now
                }
            } catch {
                guard !Task.isCancelled, !Task.isShuttingDownGracefully else { return }
                logger.warning("cannot read the index's changes; retrying", metadata: ["error": "\(error)"])
                await backoff.pause()
            }
            // A backlog is read on without waiting.
            if !more { await cancelWhenGracefulShutdown { await doorbell.wait(upTo: interval) } }
        }
    }

    /// Loads everything; returns the change log's generation and when the load will be outgrown.
    private func load(_ rows: IndexRows) async throws -> (generation: Int64, growth: TableGrowth) {
        let started = ContinuousClock.now
        let snapshot = try await rows.load()
        index.lexicon.replace(with: snapshot.words, upTo: snapshot.wordsUpTo)
        index.replace(with: snapshot.state)
        let duration = ContinuousClock.now - started
        let size = snapshot.state.size, tokens = snapshot.state.tables.tokens.size
        logger.info(
            "loaded the search index",
            metadata: [
                "posts": "\(snapshot.state.postCount)", "words": "\(snapshot.words.count)", "duration": "\(duration)",
                "text_bytes": "\(size.texts)", "listed_bytes": "\(size.listed)", "postings_bytes": "\(size.postings)",
                "tokens": "\(tokens.count)", "token_bytes": "\(tokens.bytes)", "loads": "\(index.loadCount)",
            ])
        let growth = TableGrowth(
            numberedAtLoad: snapshot.state.tables.count, loadedIn: duration, minimumAllowance: reloadAfterNewNumbers, minimumGap: reloadsApart)
        return (snapshot.generation, growth)
    }

    /// Applies changes read: the lexicon first, then the posts, a few under each hold of the
    /// index's lock.
    private func apply(_ changes: IndexRows.Changes) {
        if let wordsUpTo = changes.wordsUpTo { index.lexicon.add(changes.words, upTo: wordsUpTo) }
        guard let newest = changes.newest else { return }
        index.update { state in
            for (id, author) in changes.authors { state.setAuthor(id, author) }
            for id in changes.removed { state.remove(postId: id) }
        }
        var posts = changes.posts[...]
        while !posts.isEmpty {
            let step = posts.prefix(postsPerStep)
            posts = posts.dropFirst(step.count)
            index.update { state in
                for post in step { state.upsert(post) }
            }
        }
        index.update { $0.position = newest }
    }
}
