import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing
import TestSupport

@testable import ImagesService

/// The routes as a client written for Pexels sees them, and what reaches the upstream.
@Suite struct ImageRoutesTests {
    @Test func multiWordAndNonASCIIQueriesReachTheUpstreamEncoded() async throws {
        let pexels = FakePexels()
        try await ImagesTestService.run(pexels: pexels) { service, client in
            let token = try await service.token()
            let multiWord = try await client.search("  Red   CAR ", token: token)
            #expect(multiWord.status == .ok)
            let accented = try await client.search("Crème brûlée", token: token, extra: "&per_page=12&page=3")
            #expect(accented.status == .ok)
            let plus = try await client.images("/api/images/search?query=blue+sky", token: token)
            #expect(plus.status == .ok)
            let escapedPlus = try await client.images("/api/images/search?query=c%2B%2B+code", token: token)
            #expect(escapedPlus.status == .ok)
            let curated = try await client.images("/api/images/curated", token: token)
            #expect(curated.status == .ok)

            let calls = pexels.calls.withLock { $0 }
            #expect(calls.map(\.path) == ["/v1/search", "/v1/search", "/v1/search", "/v1/search", "/v1/curated"])
            #expect(calls.map(\.rawQuery) == [
                "query=red%20car&per_page=6&page=1",
                "query=cr%C3%A8me%20br%C3%BBl%C3%A9e&per_page=12&page=3",
                "query=blue%20sky&per_page=6&page=1",
                "query=c%2B%2B%20code&per_page=6&page=1",
                "per_page=6&page=1",
            ])
        }
    }

    @Test func theAnswerKeepsPexelsShape() async throws {
        let pexels = FakePexels()
        try await ImagesTestService.run(pexels: pexels) { service, client in
            let response = try await client.search("mountain lake", token: try await service.token(), extra: "&per_page=2")
            #expect(response.status == .ok)
            #expect(response.headers[.contentType] == "application/json; charset=utf-8")
            let page = try #require(response.json)
            let upstream = FakePexels.page(kind: "search", query: "mountain lake", perPage: 2, page: 1)
            #expect(Set(page.keys) == Set(upstream.keys))
            #expect(page["page"] as? Int == 1)
            #expect(page["per_page"] as? Int == 2)
            #expect(page["total_results"] as? Int == 8000)
            // The upstream's link would reach Pexels without a key: it points at this service instead.
            #expect(page["next_page"] as? String == "/api/images/search?page=2&per_page=2&query=mountain%20lake")

            let photos = try #require(page["photos"] as? [[String: Any]])
            let upstreamPhotos = try #require(upstream["photos"] as? [[String: Any]])
            #expect(photos.count == 2)
            for (photo, sent) in zip(photos, upstreamPhotos) {
                #expect(Set(photo.keys) == Set(sent.keys))
                #expect(photo["id"] as? Int == sent["id"] as? Int)
                #expect(photo["alt"] as? String == sent["alt"] as? String)
                let sources = try #require(photo["src"] as? [String: String])
                #expect(sources == sent["src"] as? [String: String])
                #expect(Set(sources.keys) == ["original", "large2x", "large", "medium", "small", "portrait", "landscape", "tiny"])
            }
        }
    }

    @Test func theKeyGoesUpstreamBareAndNeverToTheClient() async throws {
        let pexels = FakePexels()
        pexels.answer { $0.echoKey = true }
        try await ImagesTestService.run(pexels: pexels) { service, client in
            let token = try await service.token()
            var responses = [try await client.search("echo", token: token)]
            #expect(responses[0].status == .ok)
            pexels.answer { $0.status = 500 }
            responses.append(try await client.search("echo again", token: token))
            #expect(responses[1].status == .serviceUnavailable)
            pexels.answer { $0.status = 429 }
            responses.append(try await client.search("and again", token: token))
            #expect(responses[2].status == .serviceUnavailable)
            for path in ["/health/ready", "/metrics", "/openapi.json"] {
                responses.append(try await client.images(path, token: nil))
            }

            #expect(pexels.calls.withLock { $0.map(\.authorization) } == Array(repeating: ImagesTestService.apiKey as String?, count: 3))
            for response in responses {
                #expect(!response.text.contains(ImagesTestService.apiKey))
                #expect(!response.headers.contains { $0.value.contains(ImagesTestService.apiKey) })
            }
            #expect(responses[0].text.contains("[redacted]"))
            #expect(!service.logText.isEmpty)
            #expect(!service.logText.contains(ImagesTestService.apiKey))
            #expect(!service.metrics.emitToString().contains(ImagesTestService.apiKey))
        }
    }

    @Test func aPrintedConfigurationShowsNoKey() {
        let configuration = ImagesConfiguration(environment: ["PEXELS_API_KEY": ImagesTestService.apiKey])
        #expect(configuration.apiKey?.value == ImagesTestService.apiKey)
        for printed in everyPrinting(of: configuration) {
            #expect(!printed.contains(ImagesTestService.apiKey))
        }
    }

    @Test func withoutATokenTheRoutesAnswer401BeforeLookingAtParameters() async throws {
        let pexels = FakePexels()
        try await ImagesTestService.run(pexels: pexels) { service, client in
            for path in ["/api/images/search?query=cat", "/api/images/search", "/api/images/curated?per_page=0"] {
                let response = try await client.images(path, token: nil)
                #expect(response.status == .unauthorized)
                #expect(response.problem?.status == 401)
            }
            #expect(try await client.images("/api/images/curated", token: "not-a-jwt").status == .unauthorized)
            #expect(pexels.callCount == 0)
        }
    }

    @Test(arguments: [
        "/api/images/search", "/api/images/search?query=", "/api/images/search?query=%20%20",
        "/api/images/search?query=\(String(repeating: "a", count: 101))",
        "/api/images/search?query=cat&per_page=0", "/api/images/search?query=cat&per_page=81",
        "/api/images/search?query=cat&per_page=six", "/api/images/search?query=cat&page=0",
        "/api/images/search?query=cat&page=1001", "/api/images/curated?page=-1", "/api/images/curated?per_page=1.5",
    ])
    func badParametersAnswer400AndCallNothing(path: String) async throws {
        let pexels = FakePexels()
        try await ImagesTestService.run(pexels: pexels) { service, client in
            let response = try await client.images(path, token: try await service.token())
            #expect(response.status == .badRequest)
            #expect(response.problem?.code == "bad_request")
            #expect(pexels.callCount == 0)
        }
    }

    @Test func theBoundsOfTheParametersAreAccepted() async throws {
        let pexels = FakePexels()
        try await ImagesTestService.run(pexels: pexels) { service, client in
            let token = try await service.token()
            let longest = String(repeating: "a", count: 100)
            #expect(try await client.search(longest, token: token, extra: "&per_page=80&page=1000").status == .ok)
            #expect(try await client.search("  x  ", token: token, extra: "&per_page=1&page=1").status == .ok)
            #expect(pexels.callCount == 2)
        }
    }
}
