import PostlyModels
import PostlyService

/// The search index as the route reads it.
protocol SearchRepository: Sendable {
    /// The published posts matching `text` (any of its words), best first.
    /// - Parameter includeHTML: whether the results carry `contentHtml`.
    func search(_ text: String, page: PageRequest, includeHTML: Bool) async throws -> SearchPage
}
