import Foundation
import Logging
import Metrics
import PostlyEvents
import PostlyPostgres
import ServiceLifecycle

/// Publishes scheduled posts when they fall due. Every instance runs one: the database is the
/// schedule, and `PostRepository.publishDue` claims due posts so that each is published and
/// announced once however many run. It sleeps until the next post falls due, at most `poll`
/// (another instance may have scheduled one sooner), and wakes when this instance schedules one.
struct PostScheduler: Service {
    /// Posts published in one transaction.
    static let batchSize = 100
    /// The least it waits: a due post another instance holds stays due until that one commits,
    /// and looking again at once would spin on the database.
    static let shortestWait = Duration.milliseconds(50)
    /// How late posts are published: the write unit's clock at the publish minus `publishAt`.
    static let lag = Metrics.Timer(label: "postly_posts_publish_lag_seconds")

    let repository: any PostRepository
    let writes: WriteUnit
    let bell: CommitBell
    let poll: Duration
    let logger: Logger

    /// Rung by this instance's commits that schedule a post (it joins the scheduled lists).
    static func bell(on database: Database) -> CommitBell {
        CommitBell(database: database, channel: ReadModel.channel) { $0.hasPrefix(PostChange.lists(authorId: "", status: .scheduled).line) }
    }

    func run() async throws {
        while !Task.isShuttingDownGracefully, !Task.isCancelled {
            let seen = bell.rings
            let wait = await publishDue()
            await cancelWhenGracefulShutdown { await bell.wait(after: seen, atMost: wait) }
        }
    }

    /// Publishes every due post; how long to sleep until the next falls due (at most `poll`).
    func publishDue() async -> Duration {
        do {
            while try await publishBatch() == Self.batchSize {}
            guard let next = try await repository.nextDue() else { return poll }
            return min(poll, max(Self.shortestWait, .milliseconds(Int(next.timeIntervalSince(writes.now) * 1000))))
        } catch is CancellationError {
            return .zero
        } catch {
            logger.warning("cannot publish scheduled posts; trying again", metadata: ["error": "\(error)"])
            return poll
        }
    }

    /// Publishes a batch of due posts; how many.
    @discardableResult
    func publishBatch() async throws -> Int {
        let (posts, now) = try await writes.write { transaction in
            (try await repository.publishDue(limit: Self.batchSize, in: transaction), transaction.now)
        }
        for post in posts {
            if let publishedAt = post.publishedAt { Self.lag.recordSeconds(max(0, now.timeIntervalSince(publishedAt))) }
        }
        if !posts.isEmpty { logger.debug("published scheduled posts", metadata: ["posts": "\(posts.count)"]) }
        return posts.count
    }
}
