import Foundation

/// What a post's `coverImage` may be: an absolute http(s) URL of at most 2,048 characters,
/// written as RFC 3986 has it (a space, a quote or a `<` percent-encoded), so that it can stand
/// in an HTML attribute or a feed as it is. The API and the importer both ask here, so a post
/// imported could also have been written.
public enum CoverImage {
    public static let maximumLength = 2_048

    /// Why `text` cannot be a cover image, or nil when it can.
    public static func problem(with text: String) -> String? {
        guard text.count <= maximumLength else { return "must be at most \(maximumLength) characters" }
        // Not `URL(string:)`: it percent-encodes what RFC 3986 does not allow instead of refusing it.
        guard let url = URL(string: text, encodingInvalidCharacters: false), let scheme = url.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = url.host, !host.isEmpty
        else { return "must be an absolute http(s) URL, with spaces, quotes and other characters outside RFC 3986 percent-encoded" }
        return nil
    }
}
