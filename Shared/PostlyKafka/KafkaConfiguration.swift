import Foundation

/// How to reach the brokers and how long to wait for them. Producers, consumers and topic
/// administration all take one; raw librdkafka properties go in `extra` and win over
/// everything set here.
public struct KafkaConfiguration: Sendable {
    /// `host:port[,host:port...]` (librdkafka's `bootstrap.servers`).
    public var brokers: String
    /// Names this process in the brokers' logs and quotas.
    public var clientID: String
    /// How long a send waits for the broker's acknowledgement before it throws
    /// `KafkaError.timedOut` (librdkafka retries until then).
    public var messageTimeout: Duration
    /// How long a producer's graceful shutdown waits for messages still in flight. Short:
    /// whatever is not acknowledged by then is still in an outbox (or behind an uncommitted
    /// offset) and is sent again after the restart; with the HTTP drain it must fit well
    /// inside docker-compose's 30 s stop grace period.
    public var shutdownFlushTimeout: Duration
    /// A consumer that misses heartbeats this long leaves its group. tansu holds a group's
    /// join for half of it (so a consumer is back 3 s after its broker returned at 6 s, 1 s at
    /// 2 s); 6 s is the least Apache Kafka accepts by default (`group.min.session.timeout.ms`).
    public var sessionTimeout: Duration
    public var heartbeatInterval: Duration
    /// How long the broker holds a fetch open waiting for data. Apache Kafka answers as soon as
    /// a record arrives; tansu holds every fetch this long, so there it is the upper bound of a
    /// quiet partition's delivery delay (half of it on average), and each consumer asks
    /// 1/fetchWaitMax times a second while nothing happens.
    public var fetchWaitMax: Duration
    /// How often the client re-reads topic metadata, so a topic created (or re-created
    /// after a broker lost it) is found within this time: a consumer joins its group once its
    /// topics exist again.
    public var metadataRefreshInterval: Duration
    /// Static group membership (`group.instance.id`, KIP-345): a stable name of this instance,
    /// such as its pod's. A consumer that restarts under the same name within its session takes
    /// its partitions back at once, without waiting for its old session to expire and without
    /// a rebalance of the others; it also leaves no sooner than its session on a clean stop.
    /// Never the same for two running instances (the broker fences the older). nil: dynamic.
    public var groupInstanceID: String?
    /// Raw librdkafka properties (`CONFIGURATION.md`), applied last.
    public var extra: [String: String]

    public init(
        brokers: String,
        clientID: String = "postly",
        messageTimeout: Duration = .seconds(30),
        shutdownFlushTimeout: Duration = .seconds(5),
        sessionTimeout: Duration = .seconds(6),
        heartbeatInterval: Duration = .seconds(1),
        fetchWaitMax: Duration = .milliseconds(100),
        metadataRefreshInterval: Duration = .seconds(10),
        groupInstanceID: String? = nil,
        extra: [String: String] = [:]
    ) {
        self.brokers = brokers
        self.clientID = clientID
        self.messageTimeout = messageTimeout
        self.shutdownFlushTimeout = shutdownFlushTimeout
        self.sessionTimeout = sessionTimeout
        self.heartbeatInterval = heartbeatInterval
        self.fetchWaitMax = fetchWaitMax
        self.metadataRefreshInterval = metadataRefreshInterval
        self.groupInstanceID = groupInstanceID
        self.extra = extra
    }
}

/// Where the consumer of a group with no committed offset starts.
public enum KafkaOffsetReset: String, Sendable {
    case earliest
    case latest
}

extension KafkaConfiguration {
    /// Settings every client shares.
    var commonProperties: [String: String] {
        [
            "bootstrap.servers": brokers,
            "client.id": clientID,
            "topic.metadata.refresh.interval.ms": String(metadataRefreshInterval.milliseconds),
            // Only KafkaTopics.create makes topics, with the project's partition count; a
            // producer's metadata request would otherwise make a missing one with the broker's
            // default (tansu: 4), as after a broker that came back empty.
            "allow.auto.create.topics": "false",
            // While the brokers are down, reconnect attempts back off to once a second at most
            // (librdkafka's default grows to 10 s, which a returning broker would wait out).
            "reconnect.backoff.max.ms": "1000",
            // KIP-714 client metrics: pushed to no one here, and tansu answers each request for
            // a subscription with an error, which librdkafka asks again about every second.
            "enable.metrics.push": "false",
        ]
    }

    var producerProperties: [String: String] {
        commonProperties.merging([
            "enable.idempotence": "true",
            "acks": "all",
            "linger.ms": "5",
            "message.timeout.ms": String(messageTimeout.milliseconds),
            // A record for a topic the broker does not know fails with `.unknownTopic` after
            // this, not after librdkafka's 30 s, so its sender can create the topic and go on.
            "topic.metadata.propagation.max.ms": "1000",
        ]) { _, new in new }.merging(extra) { _, new in new }
    }

    func consumerProperties(groupID: String, offsetReset: KafkaOffsetReset) -> [String: String] {
        var properties = commonProperties
        if let groupInstanceID { properties["group.instance.id"] = groupInstanceID }
        return properties.merging([
            "group.id": groupID,
            // Offsets move only when the caller commits a handled message.
            "enable.auto.commit": "false",
            "enable.auto.offset.store": "false",
            "auto.offset.reset": offsetReset.rawValue,
            "session.timeout.ms": String(sessionTimeout.milliseconds),
            "heartbeat.interval.ms": String(heartbeatInterval.milliseconds),
            "fetch.wait.max.ms": String(fetchWaitMax.milliseconds),
        ]) { _, new in new }.merging(extra) { _, new in new }
    }

    var adminProperties: [String: String] {
        commonProperties.merging(extra) { _, new in new }
    }
}

extension Duration {
    /// Whole milliseconds, as librdkafka's `*.ms` settings and timeouts take them.
    var milliseconds: Int {
        let (seconds, attoseconds) = components
        return Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000)
    }
}
