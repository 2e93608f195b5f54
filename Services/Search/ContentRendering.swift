import PostsService

/// A post's Markdown as the posts service shows it: the same rendering, so a result's
/// `contentHtml` is the one the post has. The plain text is what is searched and highlighted.
enum ContentRendering {
    static func render(_ markdown: String) -> (html: String, text: String) {
        let rendering = PostRendering(markdown: markdown)
        return (rendering.html, markdown)
    }
}
