import Foundation
import PostlyModels

/// `publishAt` as a write sent it: not at all, `null`, or a time.
public enum PublishAtRequest: Sendable, Hashable {
    case absent
    case null
    case at(Date)
}

/// The status and `publishAt` a post has after a write: the specification's table of
/// scheduled publishing, in one place for create and update.
struct PublishSchedule: Sendable, Hashable {
    var status: PostStatus
    /// Set exactly when `status` is `scheduled`.
    var publishAt: Date?

    /// How far ahead a post may be scheduled.
    static let horizon: TimeInterval = 366 * 86_400

    /// Where a write takes a post.
    /// - Parameters:
    ///   - current: the post before the write; nil when it creates one (whose status defaults
    ///     to `published`).
    ///   - requested: the `status` sent, if any.
    ///   - now: the write unit's clock.
    /// - Throws: `PostError.invalid` for every combination the table refuses.
    static func resolve(current: PublishSchedule?, requested: PostStatus?, publishAt: PublishAtRequest, now: Date) throws(PostError) -> PublishSchedule {
        let target = requested ?? current?.status ?? .published
        switch publishAt {
        case .at(let time):
            if current?.status == .published { throw .invalid(field: "publishAt", "a published post cannot be scheduled") }
            // A draft is scheduled by saying so (WordPress's rule: a future-dated publish schedules too).
            if target == .draft { throw .invalid(field: "status", "set status to scheduled to schedule") }
            guard time > now else { throw .invalid(field: "publishAt", "must be in the future") }
            guard time <= now.addingTimeInterval(horizon) else { throw .invalid(field: "publishAt", "must be within 366 days") }
            return PublishSchedule(status: .scheduled, publishAt: time)
        case .absent:
            // The unchanged app's edit form sends its picker's status (`published`) with every
            // edit: only a `publishAt: null` or a draft takes a post out of the schedule.
            if let current, current.status == .scheduled, target != .draft { return current }
            if target == .scheduled { throw .invalid(field: "publishAt", "required when status is scheduled") }
            return PublishSchedule(status: target, publishAt: nil)
        case .null:
            if target == .scheduled { throw .invalid(field: "publishAt", "required when status is scheduled") }
            return PublishSchedule(status: target, publishAt: nil)
        }
    }
}
