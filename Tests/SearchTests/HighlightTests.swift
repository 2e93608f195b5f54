import Foundation
import PostlyModels
import PostlyPostgres
import Testing
import TestSupport

@testable import SearchService

/// The highlights are made from the words the index stored for each post, never by parsing
/// its text again: the excerpt is the one PostgreSQL's `ts_headline` would show, the matches
/// of typos and prefixes are marked, HTML is escaped, and posts indexed before the texts were
/// stored split, or before their words' positions were, are highlighted too.
@Suite struct HighlightTests {
    /// 17 words, short ones among them (they neither start nor end an excerpt).
    static let filler = "the quiet river runs past an old mill and on to the sea where gulls cry at dawn. "

    @Test func aMatchDeepInALongPostIsMarkedInTheExcerpt() async throws {
        try await SearchTestService.run { service, client in
            let content = String(repeating: Self.filler, count: 30) + "Then kayaks appear by the mill. " + String(repeating: Self.filler, count: 3)
            let id = try await service.publish("Notes", content: content)
            let result = try #require(try await client.found("kayaks").first)
            #expect(result.highlights.excerpt.contains("<mark>kayaks</mark>"))
            #expect(result.highlights.excerpt.split(separator: " ").count <= 35)
            #expect(result.highlights.excerpt == (try await service.headline(of: id, query: "kayaks")))
        }
    }

    @Test func theExcerptIsTheOneTsHeadlineShows() async throws {
        try await SearchTestService.run { service, client in
            let contents = [
                "Kayaks first, then " + String(repeating: Self.filler, count: 4),
                String(repeating: Self.filler, count: 4) + "and at last the kayaks.",
                String(repeating: Self.filler, count: 2) + "kayaks " + Self.filler + "kayaks again " + Self.filler,
                "An old mill by the kayaks, on a quiet river.",
                // Only the title matches: the first 15 words, or all of a shorter text.
                String(repeating: Self.filler, count: 3),
                "Nothing much.",
            ]
            var ids: [String] = []
            for (index, content) in contents.enumerated() {
                ids.append(try await service.publish("Kayaks \(index)", content: content))
            }
            let found = try await client.found("kayaks")
            #expect(found.count == contents.count)
            for id in ids {
                let result = try #require(found.first { $0.id == id })
                #expect(result.highlights.excerpt == (try await service.headline(of: id, query: "kayaks")), "\(result.title)")
            }
        }
    }

    @Test func typosAndPrefixesMarkTheWordsTheyMatched() async throws {
        try await SearchTestService.run { service, client in
            try await service.publish("Garden planning", content: "Notes on the garden: planning the beds.")
            // "garten": one substituted letter of "garden".
            #expect(try await eventually(within: .seconds(5)) { try await !client.found("garten").isEmpty })
            let typo = try #require(try await client.found("garten").first)
            #expect(typo.highlights.title == "<mark>Garden</mark> planning")
            #expect(typo.highlights.excerpt == "Notes on the <mark>garden</mark>: planning the beds")
            // "plann": the beginning of "planning".
            let prefix = try #require(try await client.found("plann").first)
            #expect(prefix.highlights.title == "Garden <mark>planning</mark>")
            #expect(prefix.highlights.excerpt == "Notes on the garden: <mark>planning</mark> the beds")
        }
    }

    @Test func htmlAndAccentsAroundAMatchAreEscapedAndFolded() async throws {
        try await SearchTestService.run { service, client in
            try await service.publish("Crème & brûlée <3", content: "Thomas's \"crème brûlée\" & café: 3 < 5.")
            let result = try #require(try await client.found("creme brulee").first)
            #expect(result.highlights.title == "<mark>Crème</mark> &amp; <mark>brûlée</mark> &lt;3")
            #expect(result.highlights.excerpt == "Thomas&#39;s &quot;<mark>crème</mark> <mark>brûlée</mark>&quot; &amp; café")
        }
    }

    /// Each word's first position is kept as text, whatever characters its lexeme holds.
    @Test func firstPositionsKeepQuotesAndBackslashes() async throws {
        try await SearchTestService.run { service, _ in
            let rows = try await service.database.query(
                "SELECT lexeme, positions[1] AS position FROM unnest(search_positions(\(["a\\b", "it's", "", "x", "x"]))) ORDER BY position")
            #expect(try rows.map { try $0.decode("lexeme", as: String.self) } == ["a\\b", "it's", "x"])
            #expect(try rows.map { try $0.decode("position", as: Int.self) } == [1, 2, 4])
        }
    }

    /// Migration 3 stored the texts split; migration 4 added each word's first position.
    @Test(arguments: [3, 4, 5]) func aPostIndexedBeforeAMigrationIsFoundAndHighlighted(migration: Int) async throws {
        let id = UUID().uuidString.lowercased()
        let content = String(repeating: Self.filler, count: 10) + "Then kayaks appear."
        try await SearchTestService.run(prepare: { database in
            // The index as it was before the migration, with a post in it as migration 2's
            // indexer stored it (the columns every later migration kept or converted).
            try await Migrations(schema.migrations.filter { $0.version < migration }).apply(to: database)
            try await database.execute("INSERT INTO authors (user_id, name) VALUES ('ada', 'Ada Lovelace')")
            try await database.execute(
                """
                INSERT INTO documents (id, sequence, status, title, content, content_html, content_text, excerpt, slug, cover_image,
                                       author_id, read_time, created_at, updated_at, published_at, version, vector, title_vector)
                VALUES (\(id), 1, 'published', 'Kayaks', \(content), \("<p>" + content + "</p>"), \(content), 'An excerpt', 'kayaks',
                        NULL, 'ada', 1, now(), now(), now(), 1,
                        setweight(to_tsvector('search_english', 'Kayaks'), 'A') || setweight(to_tsvector('search_english', \(content)), 'C'),
                        to_tsvector('search_english', 'Kayaks'))
                """)
        }) { service, client in
            let result = try #require(try await client.found("kayaks").first)
            #expect(result.id == id)
            #expect(result.slug == "kayaks" && result.excerpt == "An excerpt" && result.author.name == "Ada Lovelace")
            #expect(result.highlights.title == "<mark>Kayaks</mark>")
            #expect(result.highlights.excerpt == (try await service.headline(of: id, query: "kayaks")))
        }
    }
}

extension SearchTestService {
    /// The excerpt of post `id` as `ts_headline` shows it with the options the search used before
    /// it kept its texts split (for texts without HTML characters, which it did not escape).
    func headline(of id: String, query: String) async throws -> String {
        let rows = try await database.query(
            """
            SELECT ts_headline('search_english', content_text, search_query(\(query)),
                'StartSel="<mark>", StopSel="</mark>", MaxWords=35, MinWords=15, ShortWord=3, MaxFragments=1') AS headline
            FROM documents WHERE id = \(id)
            """)
        return try #require(rows.first).decode("headline", as: String.self)
    }
}
