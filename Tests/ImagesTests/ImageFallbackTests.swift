import Foundation
import HummingbirdTesting
import Testing
import TestSupport

@testable import ImagesService

/// When the upstream cannot be asked: the stale answer with its warning, else 503 saying why.
@Suite struct ImageFallbackTests {
    enum Failure: String, CaseIterable, Sendable {
        case serverError, timeout, rateLimited

        func apply(to pexels: FakePexels) {
            switch self {
            case .serverError: pexels.answer { $0.status = 500 }
            case .timeout: pexels.answer { $0.delay = .seconds(2) }
            case .rateLimited: pexels.answer { $0.status = 429 }
            }
        }

        var code: String {
            switch self {
            case .serverError: "upstream_error"
            case .timeout: "upstream_timeout"
            case .rateLimited: "upstream_rate_limited"
            }
        }
    }

    @Test(arguments: Failure.allCases)
    func aFailingUpstreamAnswersTheStaleEntryWithAWarning(failure: Failure) async throws {
        let pexels = FakePexels()
        try await Self.withAStaleEntry(pexels) { service, client, token, fresh in
            failure.apply(to: pexels)
            let started = ContinuousClock.now
            try await Self.expectStaleCopy(of: fresh, client: client, token: token)
            #expect(started.duration(to: .now) < .seconds(2))
            #expect(pexels.callCount == 2)
            #expect(service.metric("images_stale_answers_total") == 1)
        }
    }

    /// The budget is counted in the database: while it is down, a miss cannot be counted,
    /// and the stale entry answers (it answered 503).
    @Test func whileTheDatabaseIsDownTheStaleEntryAnswers() async throws {
        let pexels = FakePexels()
        try await Self.withAStaleEntry(pexels) { service, client, token, fresh in
            try await service.harness.whileTheDatabaseIsDown {
                try await Self.expectStaleCopy(of: fresh, client: client, token: token)
                #expect(try await client.search("lighthouse", token: token).status == .serviceUnavailable)
            }
            #expect(pexels.callCount == 1)
        }
    }

    /// Requests that joined a call whose budget the database failed to count answer as it did,
    /// with the stale entry; each became the next to wait on the database, one after another.
    @Test func requestsJoinedToACallTheDatabaseFailedAnswerWithIt() async throws {
        let pexels = FakePexels()
        try await Self.withAStaleEntry(pexels) { service, client, token, fresh in
            let database = service.harness.database
            let answers = Locked<[TestResponse]>([])
            let requests = try await database.whileLocked(by: { try await $0.execute("SELECT month_used FROM upstream_budget FOR UPDATE") }) {
                let requests = (0..<3).map { _ in
                    Task {
                        let answer = try await client.search("harbour", token: token)
                        answers.withLock { $0.append(answer) }
                    }
                }
                let waiting = try await eventually { try await database.someoneWaitsForALock() }
                #expect(waiting)
                // The other two join the call that waits.
                try await Task.sleep(for: .milliseconds(300))
                try await database.execute(
                    "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")
                let answered = try await eventually(within: .seconds(3)) { answers.value.count == 3 }
                #expect(answered)
                return requests
            }
            for request in requests { try await request.value }
            #expect(answers.value.allSatisfy { $0.status == .ok && $0.isStale && $0.text == fresh.text })
            #expect(pexels.callCount == 1)
        }
    }

    /// Runs `body` once "harbour" has been answered (`fresh`) and its entry has gone stale.
    static func withAStaleEntry(
        _ pexels: FakePexels,
        _ body: @Sendable @escaping (ImagesTestService, any TestClientProtocol, String, TestResponse) async throws -> Void
    ) async throws {
        try await ImagesTestService.run(pexels: pexels, environment: ["IMAGES_CACHE_TTL_SECONDS": "60"]) { service, client in
            let token = try await service.token()
            let fresh = try await client.search("harbour", token: token)
            #expect(fresh.status == .ok)
            service.clock.advance(by: 120)
            try await body(service, client, token, fresh)
        }
    }

    static func expectStaleCopy(of fresh: TestResponse, client: any TestClientProtocol, token: String) async throws {
        let stale = try await client.search("harbour", token: token)
        #expect(stale.status == .ok)
        #expect(stale.isStale)
        #expect(stale.text == fresh.text)
    }

    @Test(arguments: Failure.allCases)
    func aFailingUpstreamWithNothingCachedAnswers503SayingWhy(failure: Failure) async throws {
        let pexels = FakePexels()
        failure.apply(to: pexels)
        try await ImagesTestService.run(pexels: pexels) { service, client in
            let response = try await client.search("harbour", token: try await service.token())
            #expect(response.status == .serviceUnavailable)
            #expect(response.headers[.retryAfter] != nil)
            #expect(response.problem?.code == failure.code)
            #expect(response.problem?.detail.contains("image provider") == true)
            #expect(response.problem?.detail.contains("127.0.0.1") == false)
            #expect(!response.isStale)
        }
    }

    @Test func anUnreachableUpstreamAnswers503() async throws {
        let closedPort = try TestBroker.freePort()
        try await ImagesTestService.run(pexels: FakePexels(), environment: ["PEXELS_BASE_URL": "http://127.0.0.1:\(closedPort)"]) { service, client in
            let response = try await client.search("harbour", token: try await service.token())
            #expect(response.status == .serviceUnavailable)
            #expect(response.problem?.code == "upstream_unreachable")
            #expect(response.headers[.retryAfter] != nil)
        }
    }

    @Test func withoutAKeyTheServiceIsReadyAndAnswers503NamingTheVariable() async throws {
        let pexels = FakePexels()
        try await ImagesTestService.run(pexels: pexels, environment: ["PEXELS_API_KEY": ""]) { service, client in
            let response = try await client.search("harbour", token: try await service.token())
            #expect(response.status == .serviceUnavailable)
            #expect(response.problem?.code == "not_configured")
            #expect(response.problem?.detail.contains("PEXELS_API_KEY") == true)
            #expect(response.headers[.retryAfter] != nil)
            #expect(pexels.callCount == 0)

            // The readiness monitor's first round of checks runs in the background.
            let becameReady = try await eventually { try await client.images("/health/ready", token: nil).status == .ok }
            #expect(becameReady)
            let ready = try await client.images("/health/ready", token: nil)
            let notes = try #require(ready.json?["notes"] as? [String])
            #expect(notes.contains { $0.contains("no key configured") })
        }
    }

    @Test func withAKeyReadinessHasNothingToNote() async throws {
        try await ImagesTestService.run(pexels: FakePexels()) { _, client in
            let becameReady = try await eventually { try await client.images("/health/ready", token: nil).status == .ok }
            #expect(becameReady)
            #expect(try await client.images("/health/ready", token: nil).json?["notes"] == nil)
        }
    }

    @Test func theOpenAPIDocumentNamesEveryStatusOfTheRoutes() async throws {
        try await ImagesTestService.run(pexels: FakePexels()) { _, client in
            let document = try #require(try await client.images("/openapi.json", token: nil).json)
            let paths = try #require(document["paths"] as? [String: Any])
            for route in ["/api/images/search", "/api/images/curated"] {
                let get = try #require((paths[route] as? [String: Any])?["get"] as? [String: Any])
                let statuses = Set(((get["responses"] as? [String: Any]) ?? [:]).keys)
                #expect(statuses == ["200", "400", "401", "429", "503"])
            }
        }
    }
}
