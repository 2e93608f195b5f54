import BitCollections
import PostlyModels

/// One word of a query as the index looks for it: the lexemes of all its alternatives (itself,
/// its corrections and completions), and of itself alone.
struct WordQuery: Sendable, Hashable {
    var alternatives: [UInt32]
    var exact: [UInt32]
}

/// A result as the index hands it over: the post, and what it shows as it is now.
struct IndexHit: Sendable {
    var post: IndexedPost
    var author: Author
    var comments: [Comment]
}

extension IndexState {
    /// The page `offset..<offset + limit` of the posts matching any of `words`, best first, and
    /// the number of all of them. The ranking of `PostgresSearchRepository`, computed as sets
    /// (the bucket sort of Meilisearch): for each word the posts it matches, matches in a
    /// title and matches exactly; counted per post as bit-sliced counters, so "posts matching
    /// m words, t in the title, e exactly" is a few set operations; the buckets are walked best
    /// first, a bucket before the page only counted, and only the page's posts are sorted by
    /// date.
    func search(_ words: [WordQuery], offset: Int, limit: Int) -> (total: Int, hits: [IndexHit]) {
        var all = BitSet()
        var matched = SetCounter(), titled = SetCounter(), exactly = SetCounter()
        for word in words {
            let found = posts(holding: word.alternatives)
            all.formUnion(found)
            matched.add(found)
            titled.add(postsTitled(word.alternatives))
            exactly.add(Set(word.exact) == Set(word.alternatives) ? found : posts(holding: word.exact))
        }
        let total = all.count
        var skip = offset, take = limit
        var page: [UInt32] = []
        // Buckets best first: more words matched, more in the title, more exactly.
        buckets: for m in stride(from: words.count, through: 1, by: -1) {
            let withM = matched.members(counting: m, within: all)
            let countM = withM.count
            if skip >= countM { skip -= countM; continue }
            for t in stride(from: m, through: 0, by: -1) {
                let withT = titled.members(counting: t, within: withM)
                let countT = withT.count
                if skip >= countT { skip -= countT; continue }
                for e in stride(from: m, through: 0, by: -1) {
                    let bucket = exactly.members(counting: e, within: withT)
                    let count = bucket.count
                    if skip >= count { skip -= count; continue }
                    let chosen = newest(min(count, skip + take), of: bucket)
                    page.append(contentsOf: chosen[skip...])
                    take -= chosen.count - skip
                    skip = 0
                    if take == 0 { break buckets }
                }
            }
        }
        return (total, page.map(hit))
    }

    /// The posts that hold any of `lexemes` in their title or content, or whose author's name
    /// holds one.
    private func posts(holding lexemes: [UInt32]) -> BitSet {
        var found = BitSet(reservingCapacity: posts.count)
        for lexeme in lexemes where Int(lexeme) < anywhere.count { anywhere[Int(lexeme)].add(to: &found) }
        for lexeme in lexemes {
            for author in authorsByLexeme[lexeme] ?? [] { postsByAuthor[author]?.add(to: &found) }
        }
        return found
    }

    private func postsTitled(_ lexemes: [UInt32]) -> BitSet {
        var found = BitSet(reservingCapacity: posts.count)
        for lexeme in lexemes where Int(lexeme) < inTitle.count { inTitle[Int(lexeme)].add(to: &found) }
        return found
    }

    /// The first `count` of `set`, newest first, then by id as PostgreSQL orders text in the
    /// C collation (by bytes).
    private func newest(_ count: Int, of set: BitSet) -> [UInt32] {
        func precedes(_ a: UInt32, _ b: UInt32) -> Bool {
            let dateA = publishedAt[Int(a)], dateB = publishedAt[Int(b)]
            if dateA != dateB { return dateA > dateB }
            return posts[Int(a)]!.id.utf8.lexicographicallyPrecedes(posts[Int(b)]!.id.utf8)
        }
        guard count > 0 else { return [] }
        if count * 8 >= set.count || count > 256 {
            return Array(set.lazy.map(UInt32.init).sorted(by: precedes).prefix(count))
        }
        // The best `count` so far, best first: most posts of a big bucket are compared once.
        var best: [UInt32] = []
        best.reserveCapacity(count + 1)
        for member in set {
            let slot = UInt32(member)
            if best.count == count {
                guard precedes(slot, best[count - 1]) else { continue }
                best.removeLast()
            }
            var index = best.count
            while index > 0, precedes(slot, best[index - 1]) { index -= 1 }
            best.insert(slot, at: index)
        }
        return best
    }

    private func hit(_ slot: UInt32) -> IndexHit {
        let post = posts[Int(slot)]!
        var author = post.author
        if let known = authors[author.userId] {
            author.name = known.name
            author.profilePicture = known.profilePicture
        }
        let comments = post.comments.map { comment in
            var comment = comment
            if let known = authors[comment.author.userId] {
                comment.author.name = known.name
                comment.author.profilePicture = known.profilePicture
            }
            return comment
        }
        return IndexHit(post: post, author: author, comments: comments)
    }
}

/// How many of the sets added so far hold each member, as binary counters one bit-plane a
/// set: adding a set is a ripple-carry add of one bit to every member at once.
struct SetCounter {
    private var planes: [BitSet] = []

    mutating func add(_ set: BitSet) {
        var carry = set
        for index in planes.indices {
            guard !carry.isEmpty else { return }
            let sum = planes[index].symmetricDifference(carry)
            carry.formIntersection(planes[index])
            planes[index] = sum
        }
        if !carry.isEmpty { planes.append(carry) }
    }

    /// The members of `candidates` held by exactly `count` of the sets.
    func members(counting count: Int, within candidates: BitSet) -> BitSet {
        guard count >> planes.count == 0 else { return BitSet() }
        var members = candidates
        for (index, plane) in planes.enumerated() {
            if count >> index & 1 == 1 { members.formIntersection(plane) } else { members.subtract(plane) }
        }
        return members
    }
}
