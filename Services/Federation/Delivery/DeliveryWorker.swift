import Foundation
import Logging
import Metrics
import PostlyCurl
import PostlyEvents
import PostlyPostgres
import ServiceLifecycle
import Synchronization

/// Sends the due deliveries, signed by their actors, up to `deliveryConcurrency` at once. Wakes
/// when a transaction of its process enqueued one (`DeliveryQueue.channel`), when a delivery
/// ends, and every `pollInterval` (for retries that came due, and rows another instance
/// enqueued). Several instances share the queue: each claims rows the others do not hold.
final class DeliveryWorker: Service {
    private let queue: DeliveryQueue
    private let http: OutboundHTTP
    private let keys: ActorKeys
    private let urls: FederationURLs
    private let policy: RetryPolicy
    private let configuration: FederationConfiguration
    private let logger: Logger
    /// Deliveries under way.
    private let sending = Mutex(0)
    private let outcomes = (
        delivered: Counter(label: "postly_federation_deliveries_total", dimensions: [("outcome", "delivered")]),
        retried: Counter(label: "postly_federation_deliveries_total", dimensions: [("outcome", "retried")]),
        dead: Counter(label: "postly_federation_deliveries_total", dimensions: [("outcome", "dead")]),
        dropped: Counter(label: "postly_federation_deliveries_total", dimensions: [("outcome", "dropped")])
    )

    /// How long given-up deliveries and the ids of inbound activities are kept (a week): a
    /// repeat after that is applied again, which a Follow or an Undo survives.
    static let retention: TimeInterval = 7 * 86400

    init(queue: DeliveryQueue, http: OutboundHTTP, keys: ActorKeys, urls: FederationURLs, configuration: FederationConfiguration, logger: Logger) {
        self.queue = queue
        self.http = http
        self.keys = keys
        self.urls = urls
        self.policy = RetryPolicy(base: configuration.retryBase)
        self.configuration = configuration
        self.logger = logger
    }

    func run() async throws {
        let (wakeUps, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let commits = queue.database.onCommit(signalling: DeliveryQueue.channel) { _ in wake.yield() }
        defer { commits.cancel() }
        let pollInterval = configuration.pollInterval
        // Not cancelled at shutdown: a delivery under way finishes (within its timeout) rather
        // than being recorded as its inbox's failure.
        await withDiscardingTaskGroup { group in
            group.addTask {
                while !Task.isCancelled, !Task.isShuttingDownGracefully {
                    wake.yield()
                    await sleepUnlessShuttingDown(for: pollInterval)
                }
            }
            var lastPurge = ContinuousClock.now - .seconds(600)
            for await _ in wakeUps.cancelOnGracefulShutdown() {
                do {
                    // Every slot a delivery frees is filled at once (its end wakes this loop):
                    // an inbox that answers slowly holds its own slot, not the others'.
                    let free = configuration.deliveryConcurrency - sending.withLock { $0 }
                    if free > 0 {
                        let claimed = try await queue.claim(limit: free)
                        sending.withLock { $0 += claimed.count }
                        for delivery in claimed {
                            group.addTask {
                                await self.deliver(delivery)
                                self.sending.withLock { $0 -= 1 }
                                wake.yield()
                            }
                        }
                    }
                    if lastPurge.duration(to: .now) >= .seconds(600) {
                        try await queue.purge(before: Date().addingTimeInterval(-Self.retention))
                        lastPurge = .now
                    }
                } catch {
                    if Task.isShuttingDownGracefully { break }
                    logger.warning("cannot claim deliveries; retrying", metadata: ["error": "\(error)"])
                    await sleepUnlessShuttingDown(for: .seconds(1))
                }
            }
        }
    }

    private func deliver(_ delivery: Delivery) async {
        var status: Int?
        var retryAfter: TimeInterval?
        var reason: String
        var permanent = false
        do {
            let key = try await keys.keyPair(of: delivery.signer)
            let response = try await http.post(delivery.inbox, body: Array(delivery.body.utf8), keyId: urls.key(of: delivery.signer), key: key)
            if (200..<300).contains(response.status) {
                try await queue.delivered(delivery)
                outcomes.delivered.increment()
                return
            }
            status = response.status
            retryAfter = RetryPolicy.retryAfter(response.header("Retry-After"), now: Date())
            permanent = RetryPolicy.isPermanent(status: response.status)
            reason = "answered \(response.status)"
        } catch let error as DatabaseError {
            // Ours, not the inbox's: nothing is held against its host, and the delivery comes
            // back after its lease (sent again if the inbox took it: peers ignore a repeated id).
            logger.warning(
                "cannot read or record a delivery; it comes back after its lease",
                metadata: ["inbox": "\(delivery.inbox)", "activity": "\(delivery.activityId)", "error": "\(error)"])
            return
        } catch OutboundError.resolverBusy {
            // Ours too: other hosts' lookups held the resolver, and nothing was sent.
            let metadata: Logger.Metadata = ["inbox": "\(delivery.inbox)", "activity": "\(delivery.activityId)"]
            do {
                let back = try await queue.putBack(delivery, dueAt: Date().addingTimeInterval(10))
                logger.warning(
                    back ? "no name lookup for a delivery in time; it comes back in 10 s"
                        : "no name lookup for a delivery in time; it was superseded, or its lease lapsed",
                    metadata: metadata)
            } catch {
                logger.warning(
                    "no name lookup for a delivery in time, and its attempt cannot be handed back; it comes back after its lease",
                    metadata: metadata.merging(["error": "\(error)"]) { $1 })
            }
            return
        } catch let refused as OutboundError {
            reason = refused.description
            permanent = refused.isPermanent
        } catch {
            reason = "\(error)"
        }
        let now = Date()
        let retryAt = permanent ? nil : policy.retryAt(afterAttempts: delivery.attempts, retryAfter: retryAfter, now: now)
        let metadata: Logger.Metadata = [
            "inbox": "\(delivery.inbox)", "activity": "\(delivery.activityId)", "attempts": "\(delivery.attempts)", "error": "\(reason)",
        ]
        do {
            switch try await queue.failed(
                delivery, status: status, error: reason, retryAt: retryAt, pauseAfter: configuration.hostFailureLimit,
                pauseUntil: now.addingTimeInterval(configuration.hostPause.seconds))
            {
            case .retrying:
                outcomes.retried.increment()
                logger.info("a delivery failed; retrying later", metadata: metadata)
            case .givenUp:
                outcomes.dead.increment()
                logger.info("gave up a delivery", metadata: metadata)
            case .dropped:
                outcomes.dropped.increment()
                logger.info("a delivery failed and was dropped: a newer activity supersedes it", metadata: metadata)
            case .lapsed:
                logger.info("a delivery failed after its lease; the next attempt has it", metadata: metadata)
            }
        } catch {
            logger.warning("cannot record a failed delivery; it comes back after its lease", metadata: ["error": "\(error)"])
        }
    }
}

extension Duration {
    /// The duration in seconds, fractions included.
    var seconds: TimeInterval {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
