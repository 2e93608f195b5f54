import PostlyModels
import PostlyPostgres

/// Applies events to a service's own tables, inside the transaction that also records the
/// event's sequence: the effect and "this event was applied" commit together.
public protocol EventHandler: Sendable {
    func apply(_ event: Event, in connection: DatabaseConnection) async throws
}

/// A handler that applies a batch of events at once (fewer statements than one event at a
/// time), in their order. The runner gives it only the events newer than their key's last.
public protocol BatchEventHandler: EventHandler {
    func apply(_ events: [Event], in connection: DatabaseConnection) async throws
}

extension BatchEventHandler {
    /// One event is a batch of one.
    public func apply(_ event: Event, in connection: DatabaseConnection) async throws {
        try await apply([event], in: connection)
    }
}
