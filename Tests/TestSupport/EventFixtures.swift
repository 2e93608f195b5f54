import Foundation
import PostlyModels

/// The sample events in `Tests/Fixtures/events/`, one per event type: the event contract
/// between services. A producer's test proves it emits events shaped like them, a
/// consumer's test proves it applies them.
public enum EventFixtures {
    public static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/events")

    public static func data(_ type: EventType) throws -> Data {
        try Data(contentsOf: directory.appendingPathComponent("\(type.rawValue).json"))
    }

    public static func event(_ type: EventType) throws -> Event {
        try PostlyJSON.decoder().decode(Event.self, from: data(type))
    }

    /// `post.updated` of a post just scheduled: a draft with `publishAt`, as consumers built
    /// before scheduled posts decode it.
    public static func scheduledPostData() throws -> Data {
        try Data(contentsOf: directory.appendingPathComponent("post.updated.scheduled.json"))
    }

    /// The events an import emits (`user.registered`, `post.created`, `comment.created`): the
    /// samples with `"imported": true` (`imported/`). Consumers apply them, notifications stay quiet.
    public static let importedTypes: [EventType] = [.userRegistered, .postCreated, .commentCreated]

    public static func importedData(_ type: EventType) throws -> Data {
        try Data(contentsOf: directory.appendingPathComponent("imported/\(type.rawValue).json"))
    }

    public static func importedEvent(_ type: EventType) throws -> Event {
        try PostlyJSON.decoder().decode(Event.self, from: importedData(type))
    }

    /// A sample as an earlier version of its producer wrote it (`legacy/`): consumers still
    /// apply it. `post.updated` from before events carried the rendered post.
    public static func legacyData(_ type: EventType) throws -> Data {
        try Data(contentsOf: directory.appendingPathComponent("legacy/\(type.rawValue).json"))
    }
}
