import Foundation
import Logging
import PostlyEvents
import PostlyPostgres
import ServiceLifecycle

/// Keeps the read models of every instance of the service current with each other's changes:
/// sends this instance's committed changes (`ReadModel.outgoing`) as PostgreSQL notifications
/// and applies those of the others as they arrive, within milliseconds.
///
/// The notifications are sent after the changes committed, in their own small transactions
/// that do not wait for the disk (a notifying transaction holds a lock until its commit is
/// flushed, so writes that notified would commit one at a time). A notification that is lost
/// (this instance's connection to the database was lost) costs nothing but the cache: every
/// time listening starts again, the model drops everything it holds. An instance killed
/// between a commit and its notification never sends it: the others read the change from the
/// change log within a second (`ChangeWatch`), and each instance, as it starts, tells the
/// others to drop everything (it may be the killed one's replacement), for what the log does
/// not hold.
final class ReadModelSync: Service, Sendable {
    static let notificationChannel = "postly_posts_read_model"
    /// PostgreSQL refuses payloads of 8,000 bytes or more.
    static let payloadLimit = 7_900

    private let database: Database
    private let model: ReadModel
    private let logger: Logger
    /// Tells this instance's notifications apart from the others'.
    let instance = UUID().uuidString.lowercased()

    init(database: Database, model: ReadModel, logger: Logger) {
        self.database = database
        self.model = model
        self.logger = logger
    }

    func run() async throws {
        model.outgoing.append(.everything)
        await withDiscardingTaskGroup { group in
            group.addTask { await self.receive() }
            group.addTask { await self.send() }
        }
    }

    private func receive() async {
        let model = self.model
        let notifications = database.listen(channel: Self.notificationChannel) { model.apply(.everything) }
        for await payload in notifications.cancelOnGracefulShutdown() {
            let lines = payload.split(separator: "\n")
            guard let sender = lines.first, sender != instance else { continue }
            for line in lines.dropFirst() {
                if let change = PostChange(line: line) { model.apply(change) }
            }
        }
    }

    private func send() async {
        var backoff = Backoff(first: .milliseconds(50), maximum: .seconds(1))
        for await _ in model.outgoing.doorbell().cancelOnGracefulShutdown() {
            while !(await sendPending()) {
                await backoff.pause()
                if Task.isShuttingDownGracefully || Task.isCancelled { break }
            }
            backoff.reset()
        }
        // What the view counter's last flush and the consumers' last events changed.
        _ = await sendPending()
    }

    /// Sends every change waiting; false, with what was not sent put back, when it could not.
    private func sendPending() async -> Bool {
        var changes = model.outgoing.takeAll()
        do {
            for (payload, sent) in Self.payloads(instance: instance, changes) {
                try await Self.notify(payload, through: database)
                changes.removeFirst(sent)
            }
            return true
        } catch {
            logger.warning("cannot tell other instances of changes; trying again", metadata: ["error": "\(error)"])
            model.outgoing.putBack(changes)
            return false
        }
    }

    /// Tells every running instance of `changes` made by `sender`, which has no read model of
    /// its own (a command).
    static func tellEveryInstance(_ changes: [PostChange], from sender: String, through database: Database) async throws {
        for (payload, _) in payloads(instance: sender, changes) { try await notify(payload, through: database) }
    }

    private static func notify(_ payload: String, through database: Database) async throws {
        try await database.execute("SELECT set_config('synchronous_commit', 'off', true), pg_notify(\(notificationChannel), \(payload))")
    }

    /// The changes as notification payloads: the sender's id, then a line per change, each
    /// payload under the limit; with how many changes each carries.
    static func payloads(instance: String, _ changes: [PostChange]) -> [(payload: String, changes: Int)] {
        var payloads: [(String, Int)] = []
        var payload = instance
        var count = 0
        for change in changes {
            var line = change.line
            // An id too long for a notification: only dropping everything says it.
            if instance.utf8.count + 1 + line.utf8.count > payloadLimit { line = PostChange.everything.line }
            if payload.utf8.count + 1 + line.utf8.count > payloadLimit {
                payloads.append((payload, count))
                payload = instance
                count = 0
            }
            payload += "\n" + line
            count += 1
        }
        if count > 0 { payloads.append((payload, count)) }
        return payloads
    }
}
