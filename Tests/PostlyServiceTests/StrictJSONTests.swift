import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import PostlyModels
import PostlyService
import Testing
import TestSupport

/// The one request-body decoder every service uses, on the kit's test route.
@Suite struct StrictJSONTests {
    let json: HTTPFields = [.contentType: "application/json"]

    @Test(arguments: BadJSONBodies.all.map(\.problem))
    func aBadBodyAnswers400(problem: String) async throws {
        let bytes = try #require(BadJSONBodies.all.first { $0.problem == problem }).bytes
        try await TestApplication().test { client in
            try await client.execute(uri: "/api/notes", method: .post, headers: json, body: ByteBuffer(bytes: bytes)) { response in
                #expect(response.status == .badRequest, "\(problem)")
                #expect(response.headers[.contentType] == "application/problem+json")
                #expect(response.problem?.requestId == response.headers[.requestID])
            }
        }
    }

    @Test func nestingOf64IsAccepted() async throws {
        var deep = BadJSONBodies.deepestAccepted
        deep.insert(contentsOf: Array(#""title": "deep", "#.utf8), at: 1)
        let body = deep
        try await TestApplication().test { client in
            try await client.execute(uri: "/api/notes", method: .post, headers: json, body: ByteBuffer(bytes: body)) { response in
                #expect(response.status == .ok)
            }
        }
    }

    @Test func aRepeatedKeyInDifferentObjectsIsNoDuplicate() async throws {
        let body = #"{"title": "x", "a": {"title": 1}, "b": [{"title": 2}, {"title": 3}]}"#
        try await TestApplication().test { client in
            try await client.execute(uri: "/api/notes", method: .post, headers: json, body: ByteBuffer(string: body)) { response in
                #expect(response.status == .ok)
            }
        }
    }

    @Test func aCommaBeforeAClosingBracketInsideAStringIsNoTrailingComma() async throws {
        let body = #"{"title": "x,}", "a": [",]", {"b": ",}"}], "c": {}, "d": []}"#
        try await TestApplication().test { client in
            try await client.execute(uri: "/api/notes", method: .post, headers: json, body: ByteBuffer(string: body)) { response in
                #expect(response.status == .ok)
            }
        }
    }

    @Test(arguments: [(#"{"name": "x"}"#, "is required"), (#"{"title": 5}"#, "has the wrong type"), (#"{"title": null}"#, "is required")])
    func aMissingOrMistypedFieldAnswers422NamingIt(body: String, message: String) async throws {
        try await TestApplication().test { client in
            try await client.execute(uri: "/api/notes", method: .post, headers: json, body: ByteBuffer(string: body)) { response in
                #expect(response.status == .unprocessableContent)
                #expect(response.problem?.errors == ["title": message])
            }
        }
    }
}
