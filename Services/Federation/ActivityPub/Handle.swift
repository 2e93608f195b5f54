import PostlyModels

/// An actor's `preferredUsername`: the author's name transliterated as slugs are (`Crème
/// Brûlée` -> `creme_brulee`), `[a-z0-9_]`, at most 30 characters; `user` when nothing is left.
/// Uniqueness (`_2`, `_3`, ...) is the repository's job.
enum Handle {
    static let maximumLength = 30

    static func base(from name: String) -> String {
        let folded = Slug.make(from: name).replacingOccurrences(of: "-", with: "_")
        return trimmed(folded.isEmpty ? "user" : folded, to: maximumLength)
    }

    /// `base` with the suffix of its `attempt`-th try, still at most 30 characters.
    static func candidate(_ base: String, attempt: Int) -> String {
        guard attempt > 1 else { return base }
        let suffix = "_\(attempt)"
        return trimmed(base, to: maximumLength - suffix.count) + suffix
    }

    private static func trimmed(_ handle: String, to length: Int) -> String {
        var cut = String(handle.prefix(length))
        while cut.hasSuffix("_") { cut.removeLast() }
        return cut.isEmpty ? "user" : cut
    }
}
