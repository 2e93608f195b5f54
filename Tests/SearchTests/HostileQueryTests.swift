import Foundation
import Testing
import TestSupport

/// `q` is text, never syntax: whatever arrives answers 200 (or 400 for a blank or too long
/// one), never a 5xx.
@Suite struct HostileQueryTests {
    /// As they arrive in the URL, some deliberately not escaped as the app sends them.
    static let rawQueries: [String] = [
        "q=%27", "q=%22unbalanced", "q=a%20%26%20%7C%20!%20b", "q=%3A*", "q=%5C", "q=%25", "q=_",
        "q=" + String(repeating: "(", count: 200), "q=%F0%9F%9A%80%F0%9F%94%A5", "q=%D7%A9%D7%9C%D7%95%D7%9D%20%D8%B3%D9%84%D8%A7%D9%85",
        "q=a%00b", "q=kayak+trip", "q=kayak&trip", "q=kayak%20%26%20trip%3Ax*%20%21x%20%7C%20", "q=%27%3B%20DROP%20TABLE%20documents%3B%20--",
    ]

    @Test func hostileQueriesAnswer200Or400() async throws {
        try await SearchTestService.run { service, client in
            try await service.publish("Kayak trip", content: "Paddles (and a rope): 'tested' \"quotes\" \\ % _ !")
            for query in Self.rawQueries {
                let response = try await client.search(rawQuery: query)
                #expect(response.status == .ok || response.status == .badRequest, "\(query)")
                if response.status == .badRequest { #expect(response.problem?.status == 400, "\(query)") }
                if response.status == .ok { #expect((try? response.decode([FoundPost].self)) != nil, "\(query)") }
            }
            // Still there afterwards.
            #expect(try await client.titles("kayak") == ["Kayak trip"])
        }
    }

    @Test func thePlusAndTheAmpersandTheAppSendsUnescapedAreSearched() async throws {
        try await SearchTestService.run { service, client in
            try await service.publish("Kayak trip")
            try await service.publish("Canoe trip")
            #expect(try await client.search(rawQuery: "q=kayak+trip").decode([FoundPost].self).first?.title == "Kayak trip")
            // The app splits q at an unescaped &: "kayak" arrives.
            #expect(try await client.search(rawQuery: "q=kayak&trip").decode([FoundPost].self).map(\.title) == ["Kayak trip"])
        }
    }

    /// The form encoding the app's query strings follow: a `+` is a space, so it counts
    /// neither as text nor toward the 200 characters; an escaped one (`%2B`) is a plus.
    @Test func aPlusInTheQueryStringIsASpace() async throws {
        try await SearchTestService.run { service, client in
            try await service.publish("Kayak trip")
            #expect(try await client.search(rawQuery: "q=+++").status == .badRequest)
            let letters = String(repeating: "a", count: 199)
            #expect(try await client.search(rawQuery: "q=+++\(letters)+++").status == .ok)
            #expect(try await client.search(rawQuery: "q=+++kayak+++").decode([FoundPost].self).map(\.title) == ["Kayak trip"])
            #expect(try await client.search(rawQuery: "q=kayak%2B").decode([FoundPost].self).map(\.title) == ["Kayak trip"])
        }
    }

    @Test func aBlankOrTooLongQueryAnswers400() async throws {
        try await SearchTestService.run { _, client in
            for query in ["", "q=", "q=%20%20%20", "q=" + String(repeating: "a", count: 201)] {
                let response = try await client.search(rawQuery: query)
                #expect(response.status == .badRequest, "\(query)")
                #expect(response.problem?.code == "bad_request")
            }
            #expect(try await client.search(rawQuery: "q=" + String(repeating: "a", count: 200)).status == .ok)
        }
    }
}
