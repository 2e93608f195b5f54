import Foundation
import PostlyModels
import Testing
import TestSupport

/// Every rule of the contract's "What search finds, and in what order", each on its own.
/// Typos and prefixes go through the lexicon, which each instance loads a moment after the
/// index stored a word: those tests look again for a few seconds.
@Suite struct SearchRuleTests {
    @Test func findsATitleWord() async throws {
        try await SearchTestService.run { service, client in
            try await service.publish("Gardening on balconies")
            try await service.publish("Something else")
            #expect(try await client.titles("balconies") == ["Gardening on balconies"])
        }
    }

    @Test func findsAContentWord() async throws {
        try await SearchTestService.run { service, client in
            try await service.publish("A title", content: "The **tomatoes** grew tall this year.")
            try await service.publish("Something else")
            #expect(try await client.titles("tomatoes") == ["A title"])
        }
    }

    @Test func findsTheAuthorsName() async throws {
        try await SearchTestService.run { service, client in
            try await service.publish("Notes", author: Author(userId: "grace", name: "Grace Hopper"))
            try await service.publish("Other notes")
            #expect(try await client.titles("hopper") == ["Notes"])
        }
    }

    @Test func accentsAreFolded() async throws {
        try await SearchTestService.run { service, client in
            try await service.publish("Crème brûlée")
            #expect(try await client.titles("creme") == ["Crème brûlée"])
            #expect(try await client.titles("brulee") == ["Crème brûlée"])
        }
    }

    @Test func englishWordsAreFoundByTheirStem() async throws {
        try await SearchTestService.run { service, client in
            try await service.publish("Morning running")
            #expect(try await client.titles("run") == ["Morning running"])
            #expect(try await client.titles("runs") == ["Morning running"])
        }
    }

    @Test func aSubstitutedLetterInASixLetterWordFindsIt() async throws {
        try await SearchTestService.run { service, client in
            try await service.publish("Garden planning")
            #expect(try await eventually(within: .seconds(5)) { try await client.titles("garten") == ["Garden planning"] })
        }
    }

    @Test func anInsertedLetterInASixLetterWordFindsIt() async throws {
        try await SearchTestService.run { service, client in
            try await service.publish("Garden planning")
            #expect(try await eventually(within: .seconds(5)) { try await client.titles("gardden") == ["Garden planning"] })
        }
    }

    @Test func aDeletedLetterInASixLetterWordFindsIt() async throws {
        try await SearchTestService.run { service, client in
            try await service.publish("Garden planning")
            #expect(try await eventually(within: .seconds(5)) { try await client.titles("garen") == ["Garden planning"] })
        }
    }

    @Test func swappedNeighboursInASixLetterWordFindIt() async throws {
        try await SearchTestService.run { service, client in
            try await service.publish("Garden planning")
            #expect(try await eventually(within: .seconds(5)) { try await client.titles("gadren") == ["Garden planning"] })
        }
    }

    @Test func twoTyposInATenLetterWordFindIt() async throws {
        try await SearchTestService.run { service, client in
            try await service.publish("Everything about photograph archives")
            // "photograph": a swap (ho -> oh) and a substitution (a -> e).
            #expect(try await eventually(within: .seconds(5)) {
                try await client.titles("pohtogreph") == ["Everything about photograph archives"]
            })
        }
    }

    @Test func aFourLetterWordDoesNotMatchAnotherFourLetterWord() async throws {
        try await SearchTestService.run { service, client in
            try await service.publish("Time management")
            try await service.publish("Tame the garden")
            try await Task.sleep(for: .milliseconds(600))  // the lexicon has both words by now
            #expect(try await client.titles("tame") == ["Tame the garden"])
            #expect(try await client.titles("time") == ["Time management"])
        }
    }

    @Test func theLastWordIsAlsoAPrefix() async throws {
        try await SearchTestService.run { service, client in
            try await service.publish("Why microservices fail")
            #expect(try await eventually(within: .seconds(5)) { try await client.titles("micros") == ["Why microservices fail"] })
            // Only the last word is a prefix.
            #expect(try await client.titles("micros fail").first == "Why microservices fail")
            #expect(try await client.titles("micro").isEmpty == false)
            // However long the query, the word being typed counts.
            #expect(try await client.titles("one two three four five six seven eight nine ten micros") == ["Why microservices fail"])
        }
    }

    /// The last word of a long query counts whole, and the tenth not at all (the tenth's
    /// stems went with the last word's plan).
    @Test func aLongQuerysLastWordCountsAndItsMiddleDoesNot() async throws {
        try await SearchTestService.run { service, client in
            try await service.publish("Kubernetes basics")
            try await service.publish("Nginx tuning")
            #expect(try await eventually(within: .seconds(5)) { try await client.titles("nginx") == ["Nginx tuning"] })
            let query = "how to deploy a small service with docker and nginx on kubernetes"
            #expect(try await client.titles(query) == ["Kubernetes basics"])
        }
    }

    /// A negative number is a word of its own, as the posts were indexed; only a hyphen
    /// inside a word makes the whole of it one to leave out (its parts come too).
    @Test func aNegativeNumberIsFound() async throws {
        try await SearchTestService.run { service, client in
            try await service.publish("Camping at -5 degrees")
            try await service.publish("Camping at 5 stars")
            #expect(try await eventually(within: .seconds(5)) { try await client.titles("camping").count == 2 })
            #expect(try await client.titles("-5") == ["Camping at -5 degrees"])
            #expect(try await client.titles("e-mail").isEmpty)
        }
    }

    /// A host name, an address or a path with a hyphen is one word, as the posts were indexed
    /// (the query dropped it with the hyphenated words, and found nothing).
    @Test func aHostNameOrAnAddressWithAHyphenIsFound() async throws {
        try await SearchTestService.run { service, client in
            try await service.publish("Moving house", content: "The blog is at my-site.com now; write to jean-luc@example.org.")
            try await service.publish("Moving on", content: "The blog is at site.com.")
            #expect(try await eventually(within: .seconds(5)) { try await client.titles("moving").count == 2 })
            #expect(try await client.titles("my-site.com") == ["Moving house"])
            #expect(try await client.titles("jean-luc@example.org") == ["Moving house"])
        }
    }

    @Test func aWordInTheTitleRanksAboveOneOnlyInTheContent() async throws {
        try await SearchTestService.run { service, client in
            let now = Date()
            try await service.publish("Notes", content: "About kayaks.", publishedAt: now)
            try await service.publish("Kayaks", content: "Notes.", publishedAt: now.addingTimeInterval(-3600))
            #expect(try await client.titles("kayaks") == ["Kayaks", "Notes"])
        }
    }

    @Test func postsMatchingMoreWordsRankFirst() async throws {
        try await SearchTestService.run { service, client in
            let now = Date()
            try await service.publish("Kayaks", publishedAt: now)
            try await service.publish("Kayaks and canoes", publishedAt: now.addingTimeInterval(-3600))
            #expect(try await client.titles("kayaks canoes") == ["Kayaks and canoes", "Kayaks"])
        }
    }

    @Test func exactMatchesRankAboveTypos() async throws {
        try await SearchTestService.run { service, client in
            let now = Date()
            try await service.publish("Baking breed", publishedAt: now)
            try await service.publish("Baking bread", publishedAt: now.addingTimeInterval(-3600))
            #expect(try await eventually(within: .seconds(5)) { try await client.titles("bread") == ["Baking bread", "Baking breed"] })
        }
    }

    @Test func newerPostsRankAboveOlderOnes() async throws {
        try await SearchTestService.run { service, client in
            let now = Date()
            try await service.publish("Older kayaks", publishedAt: now.addingTimeInterval(-7200))
            try await service.publish("Newer kayaks", publishedAt: now)
            #expect(try await client.titles("kayaks") == ["Newer kayaks", "Older kayaks"])
        }
    }

    @Test func highlightsMarkTheMatchesAndEscapeHTML() async throws {
        try await SearchTestService.run { service, client in
            try await service.publish("<b>Kayaks</b> & canoes", content: "Paddle kayaks & canoes when 3 < 5 \"quoted\".")
            let result = try #require(try await client.found("kayak").first)
            #expect(result.highlights.title == "&lt;b&gt;<mark>Kayaks</mark>&lt;/b&gt; &amp; canoes")
            #expect(result.highlights.excerpt.hasPrefix("Paddle <mark>kayaks</mark> &amp; canoes when 3 &lt; 5 &quot;quoted"))
        }
    }

    @Test func theAnswerIsTheListedPostWithTheTotalInAHeader() async throws {
        try await SearchTestService.run { service, client in
            for index in 0..<25 { try await service.publish("Kayak trip \(index)") }
            let response = try await client.search("kayak")
            #expect(response.status == .ok)
            #expect(response.totalCount == "25")
            let results = try response.decode([FoundPost].self)
            #expect(results.count == 20)
            #expect(results.allSatisfy { $0.contentHtml == nil && $0.status == .published && $0.author.name == "Ada Lovelace" })

            let secondPage = try await client.search("kayak", extra: "&page=2&limit=10")
            #expect(try secondPage.decode([FoundPost].self).count == 10)
            #expect(secondPage.totalCount == "25")
            let pastTheEnd = try await client.search("kayak", extra: "&page=9&limit=10")
            #expect(try pastTheEnd.decode([FoundPost].self).isEmpty)
            #expect(pastTheEnd.totalCount == "25")

            let html = try await client.search("kayak", extra: "&limit=1&formats=html")
            #expect(try html.decode([FoundPost].self).first?.contentHtml == "<p>Nothing much.</p>\n")
        }
    }

    @Test func badPagesAnswer400() async throws {
        try await SearchTestService.run { _, client in
            let tooMany = try await client.search("kayak", extra: "&limit=101")
            let pageZero = try await client.search("kayak", extra: "&page=0")
            #expect(tooMany.status == .badRequest)
            #expect(pageZero.status == .badRequest)
        }
    }
}
