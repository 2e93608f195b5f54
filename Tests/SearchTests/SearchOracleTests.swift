import Foundation
import PostlyModels
import PostlyService
import Testing
import TestSupport

@testable import SearchService

/// The index in memory answers exactly as the PostgreSQL implementation it replaced, which
/// stays as the oracle: generated corpora (words that are typos and prefixes of one another,
/// inflections, accents, stop words, authors found by name, equal dates, edits, drafts,
/// deletions, likes, comments, renames) and generated queries (words, typos, prefixes,
/// several words); both must give the same answer: the same posts in the same order, the same
/// total, the same JSON with the same highlights.
@Suite struct SearchOracleTests {
    /// Words that collide on purpose: one typo apart, a prefix of another, one stem.
    static let vocabulary = [
        "garden", "gardens", "gardening", "garten", "warden", "harden", "garde", "kayak", "kayaks", "kayaking", "canoe", "canoes",
        "micro", "microscope", "microservices", "microwave", "photograph", "photography", "photographs", "paddle", "paddles",
        "paddling", "river", "rivers", "driver", "crème", "brûlée", "creme", "café", "cafe", "running", "runs", "run", "runner",
        "bread", "breed", "broad", "time", "tame", "tome", "planning", "plans", "planner", "the", "and", "of", "a", "is", "over",
        "naïve", "naive", "résumé", "resume", "archive", "archives", "archival", "storm", "stormy", "stream", "streams",
    ]
    static let authors = [
        Author(userId: "ada", name: "Ada Lovelace"), Author(userId: "grace", name: "Grace Kayak"),
        Author(userId: "linus", name: "Linus River"), Author(userId: "tim", name: "Tim Garden"),
    ]

    @Test(arguments: [1, 2, 3])
    func theIndexInMemoryAnswersAsPostgreSQLDoes(seed: UInt64) async throws {
        try await SearchTestService.run { service, _ in
            var random = SplitMix(seed: seed)
            try await Self.generateCorpus(service, random: &random)
            // Room for a few contents only: the answers take them from the cache and the database.
            let memory = MemorySearchRepository(index: service.index, contents: ContentCache(bytes: 8 << 10), database: service.database)
            let oracle = PostgresSearchRepository(database: service.database, lexicon: service.index.lexicon)
            for _ in 0..<120 {
                let query = Self.query(random: &random)
                let pages = [PageRequest(page: 1, limit: 100), PageRequest(page: 2, limit: 3)]
                for page in pages {
                    let html = random.next() % 4 == 0
                    let found = try await memory.search(query, page: page, includeHTML: html)
                    let expected = try await oracle.search(query, page: page, includeHTML: html)
                    #expect(found.ids == expected.ids, "seed \(seed), '\(query)', page \(page.page)")
                    #expect(found.total == expected.total, "seed \(seed), '\(query)', page \(page.page)")
                    let foundJSON = try JSONSerialization.jsonObject(with: Data(found.body)) as? NSArray
                    let expectedJSON = try JSONSerialization.jsonObject(with: Data(expected.body)) as? NSArray
                    #expect(foundJSON != nil && foundJSON == expectedJSON, "seed \(seed), '\(query)', page \(page.page)")
                }
            }
        }
    }

    static func generateCorpus(_ service: SearchTestService, random: inout SplitMix) async throws {
        // Few distinct dates, so many posts tie on the date and are ordered by id.
        let base = Date(timeIntervalSince1970: 1_790_000_000)
        var posts: [(id: String, sequence: Int64)] = []
        func words(_ range: ClosedRange<Int>) -> String {
            (0..<Int.random(in: range, using: &random)).map { _ in
                var word = vocabulary.randomElement(using: &random)!
                if Int.random(in: 0..<8, using: &random) == 0 { word = word.capitalized }
                return word
            }.joined(separator: Int.random(in: 0..<5, using: &random) == 0 ? ", " : " ")
        }
        for number in 0..<60 {
            let id = String(format: "post-%03d", Int.random(in: 0..<1000, using: &random)) + "-\(number)"
            let status: PostStatus = Int.random(in: 0..<8, using: &random) == 0 ? .draft : .published
            let date = base.addingTimeInterval(Double(Int.random(in: 0..<6, using: &random)) * 3600)
            let author = authors.randomElement(using: &random)!
            try await service.apply(
                postEvent(.created, id: id, title: words(1...5), content: words(3...80) + ".", status: status, author: author, publishedAt: date, sequence: 1))
            posts.append((id, 1))
        }
        for _ in 0..<40 {
            let index = Int.random(in: 0..<posts.count, using: &random)
            let (id, sequence) = posts[index]
            let next = sequence + 1
            posts[index].sequence = next
            let author = authors.randomElement(using: &random)!
            let date = base.addingTimeInterval(Double(Int.random(in: 0..<6, using: &random)) * 3600)
            switch Int.random(in: 0..<6, using: &random) {
            case 0:
                try await service.apply(postEvent(.deleted, id: id, title: "Gone", sequence: next))
            case 1:
                try await service.apply(postEvent(.updated, id: id, title: words(1...4), content: words(3...40), status: .draft, author: author, sequence: next))
            case 2:
                let like = PostLike(postId: id, postTitle: "", postAuthorId: author.userId, liker: author, likes: Int.random(in: 1...9, using: &random))
                try await service.apply(Event(producer: "posts", key: id, sequence: next, actorId: author.userId, data: .postLiked(like)))
            case 3:
                let comment = Comment(id: "c-\(id)-\(next)", postId: id, content: words(1...6), author: authors.randomElement(using: &random)!, createdAt: date)
                let snapshot = CommentSnapshot(comment: comment, postTitle: "", postAuthorId: author.userId)
                try await service.apply(Event(producer: "comments", key: id, sequence: next, actorId: author.userId, data: .commentCreated(snapshot)))
            default:
                try await service.apply(
                    postEvent(.updated, id: id, title: words(1...5), content: words(3...80), author: author, publishedAt: date, sequence: next))
            }
        }
        // Renames: found by the new name, not the old.
        try await service.apply(userEvent(UserSnapshot(userId: "grace", name: "Grace Canoe", profilePicture: "https://images.example.test/g.png"), sequence: 5))
        try await service.apply(userEvent(UserSnapshot(userId: "tim", name: "Tim Photograph", profilePicture: nil), sequence: 5))
    }

    /// One to three words; some with a typo, the last sometimes cut short.
    static func query(random: inout SplitMix) -> String {
        var words = (0..<Int.random(in: 1...3, using: &random)).map { _ in vocabulary.randomElement(using: &random)! }
        for index in words.indices where words[index].count >= 5 && Int.random(in: 0..<3, using: &random) == 0 {
            words[index] = typo(words[index], random: &random)
        }
        if Int.random(in: 0..<3, using: &random) == 0, let last = words.last, last.count > 2 {
            words[words.count - 1] = String(last.prefix(Int.random(in: 2..<last.count, using: &random)))
        }
        if Int.random(in: 0..<10, using: &random) == 0 { words.append(["Lovelace", "canoe", "photograph", "kayak"].randomElement(using: &random)!) }
        // Now and then text PostgreSQL splits: a number, a host, punctuation between words.
        let separator = Int.random(in: 0..<8, using: &random) == 0 ? [". ", ".", "/", " 3.5 ", ", "].randomElement(using: &random)! : " "
        return words.joined(separator: separator)
    }

    static func typo(_ word: String, random: inout SplitMix) -> String {
        var letters = Array(word)
        let at = Int.random(in: 1..<(letters.count - 1), using: &random)
        switch Int.random(in: 0..<4, using: &random) {
        case 0: letters[at] = "aeioustrn".randomElement(using: &random)!
        case 1: letters.insert("aeioustrn".randomElement(using: &random)!, at: at)
        case 2: letters.remove(at: at)
        default: letters.swapAt(at, at + 1)
        }
        return String(letters)
    }
}

/// A seeded generator, so a failing corpus can be made again.
struct SplitMix: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
