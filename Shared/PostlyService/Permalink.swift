import Foundation
import PostlyModels

/// Where people read a post: `POST_URL_TEMPLATE` (default `{base}/posts/{slug}`, the web
/// client's route) with `{base}` (`PUBLIC_BASE_URL`, the address the outside world reaches us at,
/// default the local gateway), `{slug}` and `{id}` replaced. The feeds link it and ActivityPub's
/// `Article` gives it as its `url`, so both say the same.
public struct Permalink: Sendable {
    /// Absolute, without a trailing slash.
    public var baseURL: String
    public var template: String

    /// The web client's route.
    public static let defaultTemplate = "{base}/posts/{slug}"

    public init(baseURL: String, template: String = defaultTemplate) {
        var baseURL = baseURL
        while baseURL.hasSuffix("/") { baseURL.removeLast() }
        self.baseURL = baseURL
        self.template = template
    }

    public init(environment: Environment) {
        self.init(
            baseURL: environment.string("PUBLIC_BASE_URL", default: "http://127.0.0.1:8080"),
            template: environment.string("POST_URL_TEMPLATE", default: Self.defaultTemplate))
    }

    public func url(of post: Post) -> String {
        template.replacingOccurrences(of: "{base}", with: baseURL).replacingOccurrences(of: "{slug}", with: post.slug)
            .replacingOccurrences(of: "{id}", with: post.id)
    }
}
