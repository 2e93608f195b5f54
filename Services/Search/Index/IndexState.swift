import BitCollections
import PostlyModels

/// The index in memory: every published post in a slot, and per lexeme the posts that hold it
/// anywhere and in their titles, per author the posts they wrote. Changed only by
/// `SearchIndex`'s writer, read by the searches (`IndexState+Ranking`).
struct IndexState: Sendable {
    /// What this index's texts and names are numbered with.
    let tables: IndexTables
    private(set) var slots: [String: UInt32] = [:]
    private(set) var posts: [IndexedPost?] = []
    /// `posts[slot].publishedAt`, apart: the ranking reads it for many posts.
    private(set) var publishedAt: [Int64] = []
    private var freeSlots: [UInt32] = []
    /// By lexeme: the posts whose title or content holds it.
    private(set) var anywhere: [Postings] = []
    /// By lexeme: the posts whose title holds it.
    private(set) var inTitle: [Postings] = []
    private(set) var authors: [String: IndexedAuthor] = [:]
    private(set) var authorsByLexeme: [UInt32: Set<String>] = [:]
    private(set) var postsByAuthor: [String: Postings] = [:]
    /// The last position of the change log applied.
    var position: Int64 = 0

    var postCount: Int { slots.count }

    /// What the posts keep, in bytes (about): their texts' tokens, their JSON, their postings.
    var size: (texts: Int, listed: Int, postings: Int) {
        var texts = 0, listed = 0
        for case let post? in posts {
            texts += post.title.size + post.content.size
            listed += post.listed.size
        }
        return (texts, listed, anywhere.reduce(0) { $0 + $1.size } + inTitle.reduce(0) { $0 + $1.size })
    }

    init(tables: IndexTables = IndexTables()) {
        self.tables = tables
    }

    /// Adds the post or replaces what was indexed for it.
    mutating func upsert(_ post: IndexedPost) {
        let (lexemes, titleLexemes) = tables.tokens.read { post.lexemes(in: $0) }
        if let slot = slots[post.id], let old = posts[Int(slot)] {
            let (oldLexemes, oldTitleLexemes) = tables.tokens.read { old.lexemes(in: $0) }
            for lexeme in oldLexemes.subtracting(lexemes) { anywhere[Int(lexeme)].remove(slot, slots: posts.count) }
            for lexeme in oldTitleLexemes.subtracting(titleLexemes) { inTitle[Int(lexeme)].remove(slot, slots: posts.count) }
            add(slot, to: lexemes.subtracting(oldLexemes), titles: titleLexemes.subtracting(oldTitleLexemes))
            if old.author.userId != post.author.userId {
                postsByAuthor[old.author.userId]?.remove(slot, slots: posts.count)
                postsByAuthor[post.author.userId, default: Postings()].insert(slot, slots: posts.count)
            }
            posts[Int(slot)] = post
            publishedAt[Int(slot)] = post.publishedAt
            return
        }
        let slot: UInt32
        if let free = freeSlots.popLast() {
            slot = free
            posts[Int(slot)] = post
            publishedAt[Int(slot)] = post.publishedAt
        } else {
            slot = UInt32(posts.count)
            posts.append(post)
            publishedAt.append(post.publishedAt)
        }
        slots[post.id] = slot
        add(slot, to: lexemes, titles: titleLexemes)
        postsByAuthor[post.author.userId, default: Postings()].insert(slot, slots: posts.count)
    }

    mutating func remove(postId: String) {
        guard let slot = slots.removeValue(forKey: postId), let old = posts[Int(slot)] else { return }
        let (oldLexemes, oldTitleLexemes) = tables.tokens.read { old.lexemes(in: $0) }
        for lexeme in oldLexemes { anywhere[Int(lexeme)].remove(slot, slots: posts.count) }
        for lexeme in oldTitleLexemes { inTitle[Int(lexeme)].remove(slot, slots: posts.count) }
        postsByAuthor[old.author.userId]?.remove(slot, slots: posts.count)
        posts[Int(slot)] = nil
        publishedAt[Int(slot)] = .min
        freeSlots.append(slot)
    }

    mutating func setAuthor(_ id: String, _ author: IndexedAuthor) {
        for lexeme in authors[id]?.nameLexemes ?? [] { authorsByLexeme[lexeme]?.remove(id) }
        for lexeme in author.nameLexemes where lexeme != LexemeTable.none { authorsByLexeme[lexeme, default: []].insert(id) }
        authors[id] = author
    }

    private mutating func add(_ slot: UInt32, to lexemes: Set<UInt32>, titles: Set<UInt32>) {
        if let highest = lexemes.max(), Int(highest) >= anywhere.count {
            anywhere.append(contentsOf: repeatElement(Postings(), count: Int(highest) + 1 - anywhere.count))
            inTitle.append(contentsOf: repeatElement(Postings(), count: anywhere.count - inTitle.count))
        }
        for lexeme in lexemes { anywhere[Int(lexeme)].insert(slot, slots: posts.count) }
        for lexeme in titles { inTitle[Int(lexeme)].insert(slot, slots: posts.count) }
    }
}
