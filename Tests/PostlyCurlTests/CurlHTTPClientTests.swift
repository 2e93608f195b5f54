import Foundation
import Logging
@testable import PostlyCurl
import ServiceLifecycle
import Testing

@Suite("CurlHTTPClient against a local Hummingbird server")
struct CurlHTTPClientTests {
    @Test func getReturnsStatusHeadersAndBody() async throws {
        try await withServerAndClient { server, client in
            let response = try await client.execute(.get("\(server.baseURL)/bytes/1000"))
            #expect(response.status == 200)
            #expect(response.header("content-length") == "1000")
            #expect(response.header("Content-Length") == "1000")
            #expect(response.body == pattern(count: 1000))
        }
    }

    @Test func aPinnedAddressIsUsedInsteadOfDNS() async throws {
        try await withServerAndClient { server, client in
            // A name that resolves nowhere reaches the server at the address it is pinned to.
            let port = try #require(URLComponents(string: server.baseURL)?.port)
            await #expect(throws: CurlError.self) { try await client.execute(.get("http://pinned.invalid:\(port)/bytes/10")) }
            var request = CurlHTTPClient.Request.get("http://pinned.invalid:\(port)/bytes/10")
            request.resolve = ["pinned.invalid:\(port):127.0.0.1"]
            let response = try await client.execute(request)
            #expect(response.status == 200 && response.body == pattern(count: 10))
        }
    }

    @Test func repeatedResponseHeadersAreKeptInOrder() async throws {
        try await withServerAndClient { server, client in
            let response = try await client.execute(.get("\(server.baseURL)/repeated"))
            #expect(response.status == 201)
            #expect(response.headers(named: "set-cookie") == ["first=1", "second=2"])
            #expect(response.header("SET-COOKIE") == "first=1")
            #expect(response.header("X-Absent") == nil)
            #expect(String(decoding: response.body, as: UTF8.self) == "two cookies")
        }
    }

    @Test func postSendsABinaryBodyThatComesBackIntact() async throws {
        try await withServerAndClient { server, client in
            let body = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
            let response = try await client.execute(.post(
                "\(server.baseURL)/echo", headers: [("Content-Type", "application/octet-stream")], body: body
            ))
            #expect(response.status == 200)
            #expect(response.header("X-Method") == "POST")
            #expect(response.header("X-Request-Content-Type") == "application/octet-stream")
            #expect(response.body == body)
        }
    }

    @Test func postSendsJSONThatDecodes() async throws {
        struct Key: Codable, Equatable {
            let kid: String
            let n: String
        }
        try await withServerAndClient { server, client in
            let keys = [Key(kid: "k1", n: "AQAB\u{e9}"), Key(kid: "k2", n: "\"quoted\"")]
            let response = try await client.execute(.post(
                "\(server.baseURL)/echo", headers: [("Content-Type", "application/json")], body: Array(try JSONEncoder().encode(keys))
            ))
            #expect(try JSONDecoder().decode([Key].self, from: Data(response.body)) == keys)
        }
    }

    @Test func customRequestHeadersArriveInOrderIncludingRepeatsAndEmptyValues() async throws {
        try await withServerAndClient { server, client in
            let response = try await client.execute(.get("\(server.baseURL)/echo", headers: [
                ("X-Custom", "one"), ("X-Custom", "two"), ("X-Empty", ""), ("User-Agent", "postly-tests/1"),
            ]))
            #expect(response.headers(named: "X-Echo-Custom") == ["one", "two"])
            #expect(response.headers(named: "X-Echo-Empty") == [""])
            #expect(response.header("X-Request-User-Agent") == "postly-tests/1")
        }
    }

    @Test func theConfiguredUserAgentIsSentAndNoDefaultContentTypeIsInvented() async throws {
        try await withServerAndClient(.init(userAgent: "postly-agent")) { server, client in
            let response = try await client.execute(.post("\(server.baseURL)/echo", body: Array("plain".utf8)))
            #expect(response.header("X-Request-User-Agent") == "postly-agent")
            #expect(response.header("X-Request-Content-Type") == "none")
            #expect(response.body == Array("plain".utf8))
        }
    }

    @Test(arguments: ["PUT", "DELETE", "PATCH"])
    func otherMethodsAreSentAsGiven(method: String) async throws {
        try await withServerAndClient { server, client in
            let withBody = try await client.execute(.init(method: method, url: "\(server.baseURL)/echo", body: [1, 2, 3]))
            #expect(withBody.header("X-Method") == method)
            #expect(withBody.body == [1, 2, 3])
            let withoutBody = try await client.execute(.init(method: method, url: "\(server.baseURL)/echo"))
            #expect(withoutBody.header("X-Method") == method)
            #expect(withoutBody.body.isEmpty)
        }
    }

    @Test func errorStatusesAreResponsesNotErrors() async throws {
        try await withServerAndClient { server, client in
            let unavailable = try await client.execute(.get("\(server.baseURL)/status/503"))
            let missing = try await client.execute(.get("\(server.baseURL)/no-such-route"))
            #expect(unavailable.status == 503)
            #expect(missing.status == 404)
        }
    }

    @Test func redirectsAreNotFollowed() async throws {
        try await withServerAndClient { server, client in
            let response = try await client.execute(.get("\(server.baseURL)/redirect"))
            #expect(response.status == 302)
            #expect(response.header("Location") == "/echo")
        }
    }

    @Test func aClosedPortFailsToConnect() async throws {
        let port = try LoopbackSockets.closedPort()
        try await withClient { client in
            let error = await #expect(throws: CurlError.self) {
                try await client.execute(.get("http://127.0.0.1:\(port)/"))
            }
            guard case .connectFailed = error else { Issue.record("unexpected \(String(describing: error))"); return }
        }
    }

    @Test func aConnectTimeoutFiresWhenTheServerNeverAccepts() async throws {
        let listener = try LoopbackSockets.FullBacklogListener()
        try await withClient(.init(connectTimeout: .milliseconds(300), timeout: .seconds(5))) { client in
            let started = ContinuousClock.now
            await #expect(throws: CurlError.connectTimeout) {
                try await client.execute(.get("http://127.0.0.1:\(listener.port)/"))
            }
            let elapsed = ContinuousClock.now - started
            #expect(elapsed >= .milliseconds(290) && elapsed < .milliseconds(1300), "fired after \(elapsed)")
        }
        withExtendedLifetime(listener) {}
    }

    /// A TLS handshake that stalls or fails is a connection not made: the request was never
    /// sent, and the images service gives such a call back to its budget. A failed handshake
    /// was a transport error, counted as a call the provider saw.
    @Test func aTLSHandshakeThatStallsOrFailsIsAConnectionNotMade() async throws {
        let silent = try LoopbackSockets.SilentListener()
        try await withServerAndClient(.init(connectTimeout: .milliseconds(300), timeout: .seconds(5))) { server, client in
            await #expect(throws: CurlError.connectTimeout) {
                try await client.execute(.get("https://127.0.0.1:\(silent.port)/"))
            }
            // A plain HTTP server answers the ClientHello with an HTTP error, not a handshake.
            let error = await #expect(throws: CurlError.self) {
                try await client.execute(.get(server.baseURL.replacingOccurrences(of: "http://", with: "https://") + "/status/204"))
            }
            guard case .connectFailed = error else { Issue.record("unexpected \(String(describing: error))"); return }
        }
        withExtendedLifetime(silent) {}
    }

    @Test func aTotalTimeoutFiresWhileTheServerIsSlow() async throws {
        try await withServerAndClient { server, client in
            let started = ContinuousClock.now
            await #expect(throws: CurlError.timeout) {
                try await client.execute(.init(url: "\(server.baseURL)/sleep/3000", timeout: .milliseconds(400)))
            }
            let elapsed = ContinuousClock.now - started
            #expect(elapsed >= .milliseconds(390) && elapsed < .milliseconds(1400), "fired after \(elapsed)")
        }
    }

    @Test func aTotalTimeoutOnAReusedConnectionIsNotMistakenForAConnectTimeout() async throws {
        try await withServerAndClient(.init(connectTimeout: .milliseconds(200), timeout: .seconds(5))) { server, client in
            _ = try await client.execute(.get("\(server.baseURL)/status/204"))
            await #expect(throws: CurlError.timeout) {
                try await client.execute(.init(url: "\(server.baseURL)/sleep/3000", timeout: .milliseconds(300)))
            }
        }
    }

    @Test func aBodyOverTheCapIsRefusedWhenItsLengthIsDeclared() async throws {
        try await withServerAndClient(.init(maxResponseBytes: 1000)) { server, client in
            await #expect(throws: CurlError.responseTooLarge(limit: 1000)) {
                try await client.execute(.get("\(server.baseURL)/bytes/1001"))
            }
            let atTheCap = try await client.execute(.get("\(server.baseURL)/bytes/1000"))
            #expect(atTheCap.body.count == 1000)
        }
    }

    /// A request that keeps no body gets the status of an answer of any length, declared or
    /// streamed (it was `responseTooLarge`, and the status was lost).
    @Test func aRequestThatKeepsNoBodyGetsTheStatusOfAnyAnswer() async throws {
        try await withServerAndClient(.init(maxResponseBytes: 1000)) { server, client in
            for path in ["/bytes/200000", "/stream/200000"] {
                var request = CurlHTTPClient.Request.get("\(server.baseURL)\(path)")
                request.keepsBody = false
                let answer = try await client.execute(request)
                #expect(answer.status == 200 && answer.body.isEmpty, "\(path)")
            }
        }
    }

    /// A body that is not kept is read up to the cap, and the transfer ends there (or at the
    /// timeout) with its status: an endless error page was read until the timeout, which then
    /// lost the status.
    @Test func aRequestThatKeepsNoBodyEndsAnEndlessAnswerWithItsStatus() async throws {
        try await withServerAndClient(.init(maxResponseBytes: 1000)) { server, client in
            var endless = CurlHTTPClient.Request.get("\(server.baseURL)/endless/410")
            endless.keepsBody = false
            endless.timeout = .seconds(5)
            let answer = try await client.execute(endless)
            #expect(answer.status == 410 && answer.body.isEmpty)

            // A slow body ends at the timeout with its status; an answer not begun is a timeout.
            var drip = CurlHTTPClient.Request.get("\(server.baseURL)/drip")
            drip.keepsBody = false
            drip.timeout = .milliseconds(300)
            #expect(try await client.execute(drip).status == 200)
            var slow = CurlHTTPClient.Request.get("\(server.baseURL)/sleep/2000")
            slow.keepsBody = false
            slow.timeout = .milliseconds(300)
            await #expect(throws: CurlError.timeout) { try await client.execute(slow) }
        }
    }

    @Test func aStreamedBodyOverTheCapIsRefusedWhileItArrives() async throws {
        try await withServerAndClient { server, client in
            await #expect(throws: CurlError.responseTooLarge(limit: 50_000)) {
                try await client.execute(.init(url: "\(server.baseURL)/stream/200000", maxResponseBytes: 50_000))
            }
            let exact = try await client.execute(.init(url: "\(server.baseURL)/stream/50000", maxResponseBytes: 50_000))
            #expect(exact.header("Content-Length") == nil)
            #expect(exact.body == pattern(count: 50_000))
        }
    }

    @Test func hundredConcurrentRequestsRunAtOnce() async throws {
        try await withServerAndClient { server, client in
            let started = ContinuousClock.now
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<100 {
                    group.addTask { try await client.execute(.get("\(server.baseURL)/sleep/200")).status }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let elapsed = ContinuousClock.now - started
            #expect(statuses.count == 100)
            #expect(statuses.allSatisfy { $0 == 200 })
            // Serial would be 20 s; concurrent is 200 ms plus connecting on a busy machine.
            #expect(elapsed < .seconds(3), "took \(elapsed)")
        }
    }

    @Test func cancellingTheAwaitingTaskAbortsTheTransfer() async throws {
        try await withServerAndClient { server, client in
            let request = Task { try await client.execute(.init(url: "\(server.baseURL)/drip", timeout: .seconds(30))) }
            try await Task.sleep(for: .milliseconds(300))
            let cancelled = ContinuousClock.now
            request.cancel()
            await #expect(throws: CancellationError.self) { try await request.value }
            let unblocked = ContinuousClock.now - cancelled
            let serverNoticed = try await server.dripAborted.wait(upTo: .seconds(5))
            #expect(unblocked < .milliseconds(500), "the caller resumed after \(unblocked)")
            #expect(serverNoticed != nil)
        }
    }

    @Test func aTaskCancelledBeforeItsRequestStartsFailsAtOnce() async throws {
        try await withServerAndClient { server, client in
            let started = ContinuousClock.now
            let request = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return try await client.execute(.get("\(server.baseURL)/sleep/2000"))
            }
            await #expect(throws: CancellationError.self) { try await request.value }
            #expect(ContinuousClock.now - started < .milliseconds(1000))
        }
    }

    @Test func aHeaderValueWithALineBreakIsRefusedWithoutRevealingIt() async throws {
        try await withClient { client in
            let secret = "Bearer s3cret-token"
            do {
                _ = try await client.execute(.get("http://127.0.0.1:1/", headers: [("Authorization", "\(secret)\r\nX-Injected: 1")]))
                Issue.record("the request was sent")
            } catch let error as CurlError {
                guard case .invalidRequest(let message) = error else { Issue.record("unexpected \(error)"); return }
                #expect(!message.contains("s3cret"))
                #expect(!"\(error)".contains("s3cret"))
            }
        }
    }

    @Test(arguments: ["ftp://127.0.0.1/file", "file:///etc/passwd", "not a url", ""])
    func onlyHTTPAndHTTPSURLsAreAccepted(url: String) async throws {
        try await withClient { client in
            let error = await #expect(throws: CurlError.self) {
                try await client.execute(.get(url))
            }
            guard case .invalidRequest = error else { Issue.record("unexpected \(String(describing: error))"); return }
        }
    }

    @Test func aShutDownClientRefusesNewRequests() async throws {
        try await withServerAndClient { server, client in
            let beforeShutdown = try await client.execute(.get("\(server.baseURL)/status/204"))
            #expect(beforeShutdown.status == 204)
            await client.shutdown()
            await #expect(throws: CurlError.shutdown) {
                try await client.execute(.get("\(server.baseURL)/status/204"))
            }
        }
    }

    @Test func shutdownLetsTransfersInFlightFinish() async throws {
        try await withServerAndClient { server, client in
            async let response = client.execute(.get("\(server.baseURL)/sleep/300"))
            try await Task.sleep(for: .milliseconds(100))
            await client.shutdown()
            let finished = try await response
            #expect(finished.status == 200)
        }
    }
}

@Suite("CurlHTTPClient as a service and in logs")
struct CurlHTTPClientLifecycleTests {
    @Test func runningInAServiceGroupStopsOnGracefulShutdown() async throws {
        let client = CurlHTTPClient(logger: logger)
        let group = ServiceGroup(configuration: .init(services: [client], logger: logger))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            try await Task.sleep(for: .milliseconds(50))
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
        await #expect(throws: CurlError.shutdown) {
            try await client.execute(.get("http://127.0.0.1:1/"))
        }
    }

    @Test(arguments: [
        ("https://user:pa55@example.com/keys?api_key=secret#part", "https://example.com/keys"),
        ("http://127.0.0.1:8080/a/b", "http://127.0.0.1:8080/a/b"),
        ("https://example.com?token=secret", "https://example.com"),
    ])
    func loggedURLsDropCredentialsQueryAndFragment(url: String, logged: String) {
        #expect(redacted(url: url) == logged)
    }
}

private let logger = Logger(label: "PostlyCurlTests")

private func withClient(
    _ configuration: CurlHTTPClient.Configuration = .init(),
    _ body: (CurlHTTPClient) async throws -> Void
) async throws {
    let client = CurlHTTPClient(configuration: configuration, logger: logger)
    do {
        try await body(client)
    } catch {
        await client.shutdown()
        throw error
    }
    await client.shutdown()
}

func withServerAndClient(
    _ configuration: CurlHTTPClient.Configuration = .init(),
    _ body: (TestServer, CurlHTTPClient) async throws -> Void
) async throws {
    try await TestServer.run { server in
        try await withClient(configuration) { client in try await body(server, client) }
    }
}
