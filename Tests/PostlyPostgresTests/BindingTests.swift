import Foundation
import PostlyPostgres
import Testing
import TestSupport

@Suite("Binding parameters")
struct BindingTests {
    static let hostileStrings = [
        "'", "\"", ";", "--", "$1", "'); DROP TABLE notes; --", "Robert'); DROP TABLE students;--",
        "\\", "\\x00", "caf\u{E9} \u{1F600} \u{4E2D}\u{6587} \u{202E}rtl", "", "   ", "%_", "$$ dollar $$",
    ]

    @Test func hostileStringsRoundTripAsData() async throws {
        try await TestDatabase.with { database in
            try await database.execute("CREATE TABLE notes (id serial PRIMARY KEY, body text NOT NULL)")
            for text in Self.hostileStrings {
                let rows = try await database.query("INSERT INTO notes (body) VALUES (\(text)) RETURNING body")
                #expect(try rows.first?.decode("body", as: String.self) == text)
                let selected = try await database.query("SELECT \(text)::text AS echoed")
                #expect(try selected.first?.decode("echoed", as: String.self) == text)
            }
            let count = try await database.query("SELECT count(*) AS n FROM notes")
            #expect(try count.first?.decode("n", as: Int.self) == Self.hostileStrings.count)
        }
    }

    @Test func hostileStringsRoundTripInAnArray() async throws {
        try await TestDatabase.with { database in
            let rows = try await database.query(
                "SELECT s FROM unnest(\(Self.hostileStrings)::text[]) WITH ORDINALITY AS t(s, i) ORDER BY i")
            #expect(try rows.map { try $0.decode("s", as: String.self) } == Self.hostileStrings)
        }
    }

    @Test func nulByteIsRejectedBeforeSendingAndTheConnectionStillWorks() async throws {
        try await TestDatabase.with(poolSize: 1) { database in
            await #expect(throws: DatabaseError.invalidParameter("parameter $2 contains a NUL byte")) {
                try await database.query("SELECT \(1) AS a, \("before\u{0}after") AS b")
            }
            let rows = try await database.query("SELECT \("still fine") AS b")
            #expect(try rows.first?.decode("b", as: String.self) == "still fine")
        }
    }

    @Test func descriptionRedactsBoundValues() {
        let secret = "hunter2"
        let sql: SQL = "SELECT * FROM users WHERE password = \(secret) AND id = \(42)"
        #expect(sql.text == "SELECT * FROM users WHERE password = $1 AND id = $2")
        #expect(!sql.description.contains(secret))
        #expect(!sql.description.contains("42"))
        #expect(!"\(sql)".contains(secret))
    }

    @Test func unescapedTextIsTheOnlyRawInsertion() {
        let table = "posts"
        let sql: SQL = "SELECT * FROM \(unescaped: table) WHERE slug = \(table)"
        #expect(sql.text == "SELECT * FROM posts WHERE slug = $1")
        #expect(sql.bindings == [.text("posts")])
    }
}
