/// The Kafka topics of Postly. Each event type belongs to exactly one.
public enum Topic: String, Sendable, CaseIterable {
    /// Keyed by user id.
    case users = "postly.users"
    /// Keyed by post id.
    case posts = "postly.posts"
    /// Keyed by the post id the comment belongs to, so a post's comments stay in order.
    case comments = "postly.comments"
    /// Messages a consumer could not decode, with the reason.
    case deadLetter = "postly.deadletter"
}
