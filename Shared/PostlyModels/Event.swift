import Foundation

/// The one envelope of every Postly event.
///
/// `key` is the aggregate id and the Kafka message key, so one aggregate's events stay in
/// order on one partition. `sequence` grows by one with every event of the key (for a
/// post: created, edited, liked, unliked, deleted; a post's `version` counts only changes
/// of its content and so cannot serve); a consumer applies an event only if its sequence
/// is newer than the one it has, which makes redelivery and replay harmless.
public struct Event: Codable, Sendable, Hashable {
    public static let currentSchemaVersion = 1

    public var id: UUID
    public var type: EventType
    public var schemaVersion: Int
    public var occurredAt: Date
    /// The service that wrote it, such as `posts`.
    public var producer: String
    public var key: String
    public var sequence: Int64
    /// The user whose action caused the event, if a user did.
    public var actorId: String?
    /// The W3C trace context of the change (`00-<trace id>-<span id>-<flags>`) when it was
    /// traced: a consumer's work joins the trace of the request that caused it.
    public var traceparent: String?
    /// Brought in from an earlier deployment (`postly-import`), not done by a user now: consumers
    /// apply it like any other, but nobody is notified of it. Written only when true, so an event
    /// without the key (every event before the import existed) is not imported.
    public var imported: Bool
    public var data: EventData

    public init(
        id: UUID = UUID(), occurredAt: Date = Date(), producer: String, key: String, sequence: Int64,
        actorId: String?, traceparent: String? = nil, imported: Bool = false, data: EventData
    ) {
        self.id = id
        self.type = data.type
        self.schemaVersion = Self.currentSchemaVersion
        self.occurredAt = occurredAt
        self.producer = producer
        self.key = key
        self.sequence = sequence
        self.actorId = actorId
        self.traceparent = traceparent
        self.imported = imported
        self.data = data
    }

    public var topic: Topic { type.topic }

    enum CodingKeys: String, CodingKey {
        case id, type, schemaVersion, occurredAt, producer, key, sequence, actorId, traceparent, imported, data
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(UUID.self, forKey: .id)
        type = try container.decode(EventType.self, forKey: .type)
        schemaVersion = try container.decode(Int.self, forKey: .schemaVersion)
        occurredAt = try container.decode(Date.self, forKey: .occurredAt)
        producer = try container.decode(String.self, forKey: .producer)
        key = try container.decode(String.self, forKey: .key)
        sequence = try container.decode(Int64.self, forKey: .sequence)
        actorId = try container.decodeIfPresent(String.self, forKey: .actorId)
        traceparent = try container.decodeIfPresent(String.self, forKey: .traceparent)
        imported = try container.decodeIfPresent(Bool.self, forKey: .imported) ?? false
        data = try EventData(type: type, from: container.superDecoder(forKey: .data))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id.uuidString.lowercased(), forKey: .id)
        try container.encode(type, forKey: .type)
        try container.encode(schemaVersion, forKey: .schemaVersion)
        try container.encode(occurredAt, forKey: .occurredAt)
        try container.encode(producer, forKey: .producer)
        try container.encode(key, forKey: .key)
        try container.encode(sequence, forKey: .sequence)
        try container.encode(actorId, forKey: .actorId)
        try container.encodeIfPresent(traceparent, forKey: .traceparent)
        if imported { try container.encode(true, forKey: .imported) }
        try data.encode(to: container.superEncoder(forKey: .data))
    }
}
