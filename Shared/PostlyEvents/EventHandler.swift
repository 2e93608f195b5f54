import PostlyModels
import PostlyPostgres

/// Applies events to a service's own tables, inside the transaction that also records the
/// event's sequence: the effect and "this event was applied" commit together.
public protocol EventHandler: Sendable {
    func apply(_ event: Event, in connection: DatabaseConnection) async throws
}
