import PostlyModels

/// A published post as the index in memory keeps it: what ranks it, what it is found by, and
/// what its result shows.
struct IndexedPost: Sendable, Equatable {
    var id: String
    /// As the post's events gave it: shown while no author event or row told of the author.
    var author: Author
    /// Microseconds since 1970, `Int64.min` for none (last among the newest first).
    var publishedAt: Int64
    var likes: Int
    var listed: ListedPost
    /// Not deleted, oldest first; their authors' names as the events gave them, shown when
    /// the author is not known otherwise.
    var comments: [Comment]
    var title: IndexedText
    var content: IndexedText

    /// The lexemes the post is found by, each once: its title's and its content's; and its
    /// title's.
    func lexemes(in table: TokenTable.Tokens) -> (anywhere: Set<UInt32>, inTitle: Set<UInt32>) {
        var inTitle = Set(title.lexemes(in: table))
        inTitle.remove(LexemeTable.none)
        var anywhere = Set(content.lexemes(in: table))
        anywhere.remove(LexemeTable.none)
        anywhere.formUnion(inTitle)
        return (anywhere, inTitle)
    }
}

/// An author as the index keeps it: the name shown on their posts and comments, and the
/// lexemes it is found by.
struct IndexedAuthor: Sendable {
    var name: String
    var profilePicture: String?
    var nameLexemes: [UInt32]
}
