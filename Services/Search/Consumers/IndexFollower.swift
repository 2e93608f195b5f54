import Logging
import PostlyEvents
import PostlyPostgres
import ServiceLifecycle

/// Keeps `SearchIndex` in this instance's memory: loads it whole from the tables at start,
/// then applies what the change log says changed, whichever instance's consumer wrote it. It
/// looks when the writers notify that a change committed, and every `interval` in case a
/// notification was lost (the listening connection reconnects); so every instance answers a
/// change moments after its commit. After a reindex switched the tables, when changes it has
/// not read may have been pruned (`LogReach`), and when its tokens have doubled since the load,
/// it loads everything again (the old index answers meanwhile).
struct IndexFollower: Service {
    let index: SearchIndex
    let database: Database
    let logger: Logger
    var interval: Duration = .seconds(1)
    /// Posts applied under one hold of the index's lock, so searches wait at most that long.
    var postsPerStep = 64
    /// The tokens numbered since the load (as many as the load numbered, and at least this
    /// many) after which the index is loaded again. Its tables only grow: the tokens of a text
    /// edited or gone are let go only by a load. So an index holds at most about twice the
    /// tokens its texts have, and a growing site loads once each time its tokens double.
    var reloadAfterNewTokens = 200_000

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
        var tokensAtLoad = 0
        var reach = LogReach(kept: ChangeLog.kept, now: .now)
        var lastPruning = ContinuousClock.now
        var backoff = Backoff()
        while !Task.isCancelled, !Task.isShuttingDownGracefully {
            var more = false
            let looked = ContinuousClock.now
            do {
                if let loaded = generation, let position = index.position, let tables = index.tables, reach.mayReadOn(at: looked),
                    tables.tokens.size.count - tokensAtLoad <= max(tokensAtLoad, reloadAfterNewTokens)
                {
                    let changes = try await rows.changes(
                        after: position, wordsAfter: index.lexicon.loadedUpTo, stored: index.stored.after(position, generation: loaded),
                        tables: tables)
                    if changes.generation == loaded {
                        apply(changes)
                        more = changes.isPartial
                    } else {
                        (generation, tokensAtLoad) = try await load(rows)
                    }
                } else {
                    (generation, tokensAtLoad) = try await load(rows)
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

    /// Loads everything; returns the change log's generation and the tokens numbered.
    private func load(_ rows: IndexRows) async throws -> (generation: Int64, tokens: Int) {
        let started = ContinuousClock.now
        let snapshot = try await rows.load()
        index.lexicon.replace(with: snapshot.words, upTo: snapshot.wordsUpTo)
        index.replace(with: snapshot.state)
        let size = snapshot.state.size, tokens = snapshot.state.tables.tokens.size
        logger.info(
            "loaded the search index",
            metadata: [
                "posts": "\(snapshot.state.postCount)", "words": "\(snapshot.words.count)", "duration": "\(ContinuousClock.now - started)",
                "text_bytes": "\(size.texts)", "listed_bytes": "\(size.listed)", "postings_bytes": "\(size.postings)",
                "tokens": "\(tokens.count)", "token_bytes": "\(tokens.bytes)",
            ])
        return (snapshot.generation, tokens.count)
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
