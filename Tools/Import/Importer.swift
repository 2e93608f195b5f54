import Foundation
import PostlyModels

/// Sends a plan to the services, collection by collection (users → posts → comments →
/// likes), recording each acknowledged batch in the state file so a killed run resumes.
public struct Importer: Sendable {
    /// The base URLs of the services that own the data, and the token their import routes require.
    public struct Targets: Sendable {
        public var auth: String
        public var posts: String
        public var comments: String
        public var token: Secret

        public init(auth: String, posts: String, comments: String, token: Secret) {
            (self.auth, self.posts, self.comments, self.token) = (auth, posts, comments, token)
        }

        func url(of collection: ImportReport.Collection) -> String {
            let (base, path) =
                switch collection {
                case .users: (auth, "users")
                case .posts: (posts, "posts")
                case .comments: (comments, "comments")
                case .likes: (posts, "likes")
                }
            return base.trimmingCharacters(in: ["/"]) + "/internal/import/" + path
        }
    }

    /// Five retries after the first try, the wait doubling from `firstDelay`.
    public struct RetryPolicy: Sendable {
        public var retries = 5
        public var firstDelay: Duration = .milliseconds(250)
        public init() {}
    }

    public var plan: ImportPlan
    public var targets: Targets
    public var transport: any ImportTransport
    public var statePath: String
    public var retry = RetryPolicy()
    /// Called after every batch with a one-line progress message.
    public var progress: @Sendable (String) -> Void = { _ in }

    public init(plan: ImportPlan, targets: Targets, transport: any ImportTransport, statePath: String) {
        (self.plan, self.targets, self.transport, self.statePath) = (plan, targets, transport, statePath)
    }

    /// Runs (or resumes) the import; the report's counts cover the whole import.
    public func run() async throws(ImportFailure) -> ImportReport {
        let sources = [plan.report.source.users.sha256, plan.report.source.posts.sha256, plan.report.source.likes.sha256]
        var state = try ImportState.load(from: statePath)
        if let previous = state, previous.sources != sources {
            throw .badInput("\((statePath as NSString).lastPathComponent): the state of a run over other files; remove it to start over")
        }
        if state?.done == true { state = nil }
        var report = plan.report
        report.runId = state?.runId ?? report.runId
        var counts = state?.counts ?? .init()
        var rejected = state?.rejected ?? []
        let order = ImportReport.Collection.allCases

        for collection in order {
            // The comments service waits for a comment's post, and answers 503 while it has not
            // arrived: a post its service refused never will.
            let refusedPosts = Set(rejected.filter { $0.collection == .posts }.compactMap(\.id))
            let all = ImportBatch.batches(of: plan, collection, leavingOutCommentsOf: refusedPosts)
            let resumed = state.map { order.firstIndex(of: $0.collection)! }, here = order.firstIndex(of: collection)!
            let acknowledged =
                switch resumed {
                case let resumed? where resumed > here: all.count
                case let resumed? where resumed == here: state!.batchNo
                default: 0
                }
            // Once, as the comments begin: a state saved since has them (with no comment sent,
            // a resume among the likes counted them again).
            if collection == .comments, (resumed ?? 0) < here {
                let leftOut = plan.comments.filter { refusedPosts.contains($0.record.postId) }
                counts[.comments].rejected += leftOut.count
                rejected += leftOut.map { .init(collection: .comments, line: $0.line, id: $0.record._id, reason: "its post was rejected") }
            }
            for (index, batch) in all.enumerated().dropFirst(acknowledged) {
                let answer = try await send(batch)
                counts[collection].created += answer.created
                counts[collection].existing += answer.existing
                counts[collection].rejected += answer.rejected.count
                rejected += answer.rejected.map { .init(collection: collection, line: batch.lines[$0.id], id: $0.id, reason: $0.reason) }
                let next = ImportState(
                    runId: report.runId, sources: sources, collection: collection, byteOffset: batch.endOffset, batchNo: index + 1,
                    counts: counts, rejected: rejected, done: false)
                try save(next)
                state = next
                progress(
                    "\(collection.rawValue) batch \(index + 1)/\(all.count): \(counts[collection].created) created, "
                        + "\(counts[collection].existing) existing, \(counts[collection].rejected) rejected")
            }
        }
        if var finished = state {
            finished.done = true
            try save(finished)
        }
        for collection in order {
            report.counts[collection].created = counts[collection].created
            report.counts[collection].existing = counts[collection].existing
            report.counts[collection].rejected += counts[collection].rejected
        }
        report.rejected += rejected
        return report
    }

    private func save(_ state: ImportState) throws(ImportFailure) {
        do {
            try state.save(to: statePath)
        } catch {
            throw .badInput("\((statePath as NSString).lastPathComponent): cannot be written: \(error.localizedDescription)")
        }
    }

    /// One batch, retried on connection errors, 5xx, 429 and 401 (a service restarting with
    /// its token); any other answer than 200 stops the run.
    private func send(_ batch: ImportBatch) async throws(ImportFailure) -> ImportRecords.Answer {
        let url = targets.url(of: batch.collection)
        var delay = retry.firstDelay
        var lastProblem = ""
        for attempt in 0...retry.retries {
            if attempt > 0 {
                try? await Task.sleep(for: delay)
                delay *= 2
            }
            let status: Int, body: [UInt8]
            do {
                (status, body) = try await transport.post(url, token: targets.token.value, body: batch.body)
            } catch {
                lastProblem = "unreachable (\(error))"
                continue
            }
            switch status {
            case 200:
                guard let answer = try? JSONDecoder().decode(ImportRecords.Answer.self, from: Data(body)) else {
                    throw .serviceUnavailable("\(url): answered 200 without {created, existing, rejected}")
                }
                return answer
            case 401:
                lastProblem = "answered 401: the token is refused (POSTLY_IMPORT_TOKEN must be the service's)"
            case 429, 500...:
                lastProblem = "answered \(status)"
            case 404:
                throw .serviceUnavailable("\(url): answered 404: the service serves no import route (is POSTLY_IMPORT_TOKEN set for it?)")
            default:
                throw .serviceUnavailable("\(url): answered \(status): \(String(decoding: body.prefix(300), as: UTF8.self))")
            }
        }
        throw .serviceUnavailable("\(url): \(lastProblem) after \(retry.retries) retries; run again to resume")
    }
}
