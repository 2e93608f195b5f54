import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import PostlyModels
import PostlyService
import Testing

/// Bad input answers a clear 4xx problem document with the request id, never a 500.
@Suite struct ProblemDocumentTests {
    let json: HTTPFields = [.contentType: "application/json"]

    @Test func malformedJSONAnswers400() async throws {
        try await TestApplication().test { client in
            try await client.execute(uri: "/api/notes", method: .post, headers: json, body: ByteBuffer(string: "{\"title\": ")) { response in
                #expect(response.status == .badRequest)
                #expect(response.headers[.contentType] == "application/problem+json")
                let problem = try #require(response.problem)
                #expect(problem.status == 400)
                #expect(problem.error == problem.detail)
                #expect(problem.requestId == response.headers[.requestID])
            }
        }
    }

    @Test func missingKeyAnswers422NamingIt() async throws {
        try await TestApplication().test { client in
            try await client.execute(uri: "/api/notes", method: .post, headers: json, body: ByteBuffer(string: "{\"name\": \"x\"}")) { response in
                #expect(response.status == .unprocessableContent)
                #expect(response.problem?.detail.contains("title") == true)
            }
        }
    }

    @Test func nonJSONContentTypeAnswers415() async throws {
        try await TestApplication().test { client in
            try await client.execute(
                uri: "/api/notes", method: .post, headers: [.contentType: "text/plain"], body: ByteBuffer(string: "{\"title\": \"x\"}")
            ) { response in
                #expect(response.status == .unsupportedMediaType)
                #expect(response.problem?.code == "unsupported_media_type")
            }
        }
    }

    @Test func jsonWithCharsetIsAccepted() async throws {
        try await TestApplication().test { client in
            try await client.execute(
                uri: "/api/notes", method: .post, headers: [.contentType: "application/json; charset=utf-8"],
                body: ByteBuffer(string: "{\"title\": \"Crème\"}")
            ) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "application/json; charset=utf-8")
                #expect(String(buffer: response.body) == #"{"title":"Crème"}"#)
            }
        }
    }

    @Test func twoMebibyteBodyAnswers413() async throws {
        let body = "{\"title\": \"" + String(repeating: "a", count: 2 << 20) + "\"}"
        try await TestApplication().test { client in
            try await client.execute(uri: "/api/notes", method: .post, headers: json, body: ByteBuffer(string: body)) { response in
                #expect(response.status == .contentTooLarge)
                #expect(response.problem?.code == "body_too_large")
                #expect(response.headers[.requestID] != nil)
            }
        }
    }

    @Test func unknownRouteAnswers404ProblemDocument() async throws {
        try await TestApplication().test { client in
            try await client.execute(uri: "/api/nothing/here", method: .get) { response in
                #expect(response.status == .notFound)
                #expect(response.headers[.contentType] == "application/problem+json")
                #expect(response.problem?.code == "not_found")
                #expect(response.headers[.requestID] != nil)
            }
        }
    }

    @Test func unexpectedErrorAnswers500WithoutInternals() async throws {
        try await TestApplication().test { client in
            try await client.execute(uri: "/api/broken", method: .get) { response in
                #expect(response.status == .internalServerError)
                let text = String(buffer: response.body)
                #expect(!text.contains("SELECT"))
                #expect(!text.contains("SecretFailure"))
                #expect(response.problem?.code == "internal_error")
            }
        }
    }

    @Test func aTransientDatabaseErrorAnswers503WithRetryAfterNever500() async throws {
        try await TestApplication().test { client in
            try await client.execute(uri: "/api/busy", method: .get) { response in
                #expect(response.status == .serviceUnavailable)
                #expect(response.headers[.retryAfter] != nil)
                #expect(response.problem?.code == "unavailable")
            }
        }
    }

    /// Statement cancelled (a statement_timeout), an admin's cancel, disk or memory full, the
    /// server's own I/O: the database cannot do it now, which is 503, not the request's fault.
    @Test(arguments: ["57014", "57P04", "53100", "53200", "58030"])
    func aDatabaseThatCannotDoItNowAnswers503(sqlState: String) async throws {
        try await TestApplication().test { client in
            try await client.execute(uri: "/api/database-error/\(sqlState)", method: .get) { response in
                #expect(response.status == .serviceUnavailable)
                #expect(response.problem?.code == "unavailable")
            }
        }
    }

    /// A statement the server refuses for what it is (a missing table, a value out of range) is ours to fix.
    @Test(arguments: ["42P01", "22003"])
    func aStatementTheServerRefusesAnswers500(sqlState: String) async throws {
        try await TestApplication().test { client in
            try await client.execute(uri: "/api/database-error/\(sqlState)", method: .get) { response in
                #expect(response.status == .internalServerError)
                #expect(!String(buffer: response.body).contains("what the server said"))
            }
        }
    }

    @Test func requestIdIsEchoedOrGenerated() async throws {
        try await TestApplication().test { client in
            try await client.execute(uri: "/health/live", method: .get, headers: [.requestID: "abc-123"]) { response in
                #expect(response.headers[.requestID] == "abc-123")
            }
            try await client.execute(uri: "/health/live", method: .get) { response in
                #expect(response.headers[.requestID]?.count == 36)
            }
            try await client.execute(uri: "/health/live", method: .get, headers: [.requestID: String(repeating: "x", count: 500)]) { response in
                #expect(response.headers[.requestID]?.count == 36)
            }
        }
    }

    @Test(arguments: ["page=0", "page=-1", "page=abc", "limit=0", "limit=101", "limit=1.5", "page=99999999999999999999"])
    func outOfRangePaginationAnswers400(query: String) async throws {
        try await TestApplication().test { client in
            try await client.execute(uri: "/api/page?\(query)", method: .get) { response in
                #expect(response.status == .badRequest)
                #expect(response.problem?.code == "bad_request")
            }
        }
    }

    @Test func paginationDefaultsAndOffsets() async throws {
        try await TestApplication().test { client in
            try await client.execute(uri: "/api/page", method: .get) { response in
                #expect(String(buffer: response.body) == #"{"title":"1/10/0"}"#)
            }
            try await client.execute(uri: "/api/page?page=3&limit=100", method: .get) { response in
                #expect(String(buffer: response.body) == #"{"title":"3/100/200"}"#)
            }
        }
    }
}
