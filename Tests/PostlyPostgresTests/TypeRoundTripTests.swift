import Foundation
import PostlyPostgres
import Testing
import TestSupport

@Suite("Types round-trip")
struct TypeRoundTripTests {
    enum Status: String, PostgresBindable, PostgresDecodable { case draft, published }

    @Test func everyBindableTypeRoundTripsThroughATable() async throws {
        try await TestDatabase.with { database in
            try await database.execute("""
                CREATE TABLE everything (
                    s text, i bigint, i32 integer, d double precision, b boolean, u uuid,
                    t timestamptz, bytes bytea, tags text[], numbers bigint[], ids uuid[], status text
                )
                """)
            let id = UUID()
            let date = Date(timeIntervalSince1970: 1_763_700_252.123)
            let bytes: [UInt8] = [0, 1, 2, 0x7F, 0x80, 0xFF, 0]
            let tags = ["plain", "with space", "comma,inside", "quote\"inside", "back\\slash", "{braces}", "NULL", "", "\u{1F600}"]
            let ids = [UUID(), UUID()]
            try await database.execute("""
                INSERT INTO everything VALUES (
                    \("text \u{1F600}"), \(Int.max), \(Int32.min), \(-1.5e-7), \(true), \(id),
                    \(date), \(bytes), \(tags), \([1, -2, 3]), \(ids), \(Status.published)
                )
                """)
            let row = try #require(try await database.query("SELECT * FROM everything").first)
            #expect(try row.decode("s", as: String.self) == "text \u{1F600}")
            #expect(try row.decode("i", as: Int.self) == Int.max)
            #expect(try row.decode("i", as: Int64.self) == Int64.max)
            #expect(try row.decode("i32", as: Int32.self) == Int32.min)
            #expect(try row.decode("d", as: Double.self) == -1.5e-7)
            #expect(try row.decode("b", as: Bool.self) == true)
            #expect(try row.decode("u", as: UUID.self) == id)
            let decoded = try row.decode("t", as: Date.self)
            #expect(abs(decoded.timeIntervalSince(date)) < 0.000_001)
            #expect(Int((decoded.timeIntervalSince1970 * 1000).rounded()) == 1_763_700_252_123)
            #expect(try row.decode("bytes", as: [UInt8].self) == bytes)
            #expect(try row.decode("bytes", as: Data.self) == Data(bytes))
            #expect(try row.decode("tags", as: [String].self) == tags)
            #expect(try row.decode("numbers", as: [Int].self) == [1, -2, 3])
            #expect(try row.decode("ids", as: [UUID].self) == ids)
            #expect(try row.decode("status", as: Status.self) == .published)
            #expect(try row.decode(0, as: String.self) == "text \u{1F600}")
        }
    }

    @Test func nilBindsAsNullAndNullDecodesAsNil() async throws {
        try await TestDatabase.with { database in
            try await database.execute("CREATE TABLE maybe (s text, i bigint, u uuid, t timestamptz, bytes bytea, tags text[])")
            let none: String? = nil
            try await database.execute("""
                INSERT INTO maybe VALUES (\(none), \(Int?.none), \(UUID?.none), \(Date?.none), \([UInt8]?.none), \([String]?.none))
                """)
            let row = try #require(try await database.query("SELECT * FROM maybe").first)
            #expect(try row.decode("s", as: String?.self) == nil)
            #expect(try row.decode("i", as: Int?.self) == nil)
            #expect(try row.decode("u", as: UUID?.self) == nil)
            #expect(try row.decode("t", as: Date?.self) == nil)
            #expect(try row.decode("bytes", as: [UInt8]?.self) == nil)
            #expect(try row.decode("tags", as: [String]?.self) == nil)
            #expect(row.isNull("s"))
            #expect(throws: DatabaseError.self) { try row.decode("s", as: String.self) }
            let some = try #require(try await database.query("SELECT \(Int?.some(7)) AS seven").first)
            #expect(try some.decode("seven", as: Int?.self) == 7)
        }
    }

    @Test func datesKeepMillisecondsAcrossTimeZonesAndEras() async throws {
        try await TestDatabase.with { database in
            for seconds in [0, 1_763_700_252.001, 1_763_700_252.999, -86_400.5, 4_102_444_800.25] {
                let date = Date(timeIntervalSince1970: seconds)
                let row = try #require(try await database.query("SELECT \(date) AS t, \(date)::timestamp AS plain").first)
                #expect(abs(try row.decode("t", as: Date.self).timeIntervalSince(date)) < 0.000_001)
                #expect(abs(try row.decode("plain", as: Date.self).timeIntervalSince(date)) < 0.000_001)
            }
            let row = try #require(try await database.query("SELECT now() AS now, 'infinity'::timestamptz AS later").first)
            #expect(abs(try row.decode("now", as: Date.self).timeIntervalSinceNow) < 60)
            #expect(try row.decode("later", as: Date.self) == .distantFuture)
        }
    }

    @Test func decodingTheWrongTypeThrowsATypedError() async throws {
        try await TestDatabase.with { database in
            let row = try #require(try await database.query("SELECT 'secret text'::text AS title, 3000000000::bigint AS big").first)
            #expect(throws: DatabaseError.decoding(column: "title", reason: "not an integer")) {
                try row.decode("title", as: Int.self)
            }
            #expect(throws: DatabaseError.decoding(column: "big", reason: "the integer is out of range")) {
                try row.decode("big", as: Int32.self)
            }
            #expect(throws: DatabaseError.decoding(column: "missing", reason: "no such column in the result")) {
                try row.decode("missing", as: String.self)
            }
            #expect(throws: DatabaseError.self) { try row.decode("title", as: UUID.self) }
        }
    }

    @Test func serverErrorsDoNotQuoteBoundValues() async throws {
        try await TestDatabase.with { database in
            do {
                _ = try await database.query("SELECT \("not-a-uuid-secret")::uuid")
                Issue.record("expected an error")
            } catch let error as DatabaseError {
                guard case .server(let sqlState, let message) = error else { throw error }
                #expect(sqlState == "22P02")
                #expect(!message.contains("secret"))
                #expect(!"\(error)".contains("secret"))
            }
        }
    }
}
