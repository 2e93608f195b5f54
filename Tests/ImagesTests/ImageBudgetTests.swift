import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing
import TestSupport

@testable import ImagesService

/// The upstream budget (hourly and monthly, the upstream's own word, a 429) and each user's
/// hourly allowance of misses.
@Suite struct ImageBudgetTests {
    @Test func theSixthDistinctQueryOfAnHourAnswers503WithoutCallingUpstream() async throws {
        let pexels = FakePexels()
        try await ImagesTestService.run(pexels: pexels, environment: ["PEXELS_HOURLY_LIMIT": "5"]) { service, client in
            for query in ["one", "two", "three", "four", "five"] {
                #expect(try await client.search(query, token: try await service.token()).status == .ok)
                service.clock.advance(by: 60)
            }
            let sixth = try await client.search("six", token: try await service.token())
            #expect(sixth.status == .serviceUnavailable)
            #expect(sixth.problem?.code == "budget_spent")
            #expect(sixth.problem?.detail.contains("hour") == true)
            // The first call of the hour leaves the window 3600 s after it was made, 300 s ago.
            #expect(sixth.headers[.retryAfter] == "3300")
            #expect(pexels.callCount == 5)
            #expect(service.metric("images_upstream_budget_remaining{window=\"hour\"}") == 0)
            // Cached answers still come.
            #expect(try await client.search("three", token: try await service.token()).status == .ok)

            service.clock.advance(by: 3300)
            #expect(try await client.search("six", token: try await service.token()).status == .ok)
            #expect(pexels.callCount == 6)
        }
    }

    @Test func theMonthlyLimitHoldsToo() async throws {
        let pexels = FakePexels()
        try await ImagesTestService.run(pexels: pexels, environment: ["PEXELS_MONTHLY_LIMIT": "2"]) { service, client in
            let token = try await service.token()
            #expect(try await client.search("one", token: token).status == .ok)
            #expect(try await client.search("two", token: token).status == .ok)
            let third = try await client.search("three", token: token)
            #expect(third.status == .serviceUnavailable)
            #expect(third.problem?.detail.contains("month") == true)
            #expect(pexels.callCount == 2)
        }
    }

    @Test func theMonthlyWindowIsTheCalendarMonthInUTCUnlessTheUpstreamSaysOtherwise() async throws {
        let test = try await TestDatabase.create(poolSize: 2)
        _ = try await schema.apply(to: test.database)
        // 2027-01-31T23:00:00Z
        let lastHourOfJanuary = Date(timeIntervalSince1970: 1_801_436_400)
        let budget = UpstreamBudget(hourlyLimit: 10, monthlyLimit: 1, userHourlyLimit: 10, database: test.database)
        #expect(try await budget.reserve(userId: "u", now: lastHourOfJanuary).isGranted)
        #expect(try await budget.reserve(userId: "u", now: lastHourOfJanuary + 60) == .refused(.monthSpent(until: lastHourOfJanuary + 3600)))
        #expect(try await budget.reserve(userId: "u", now: lastHourOfJanuary + 3600).isGranted)
        #expect(budget.remaining == .init(hour: 9, month: 0))
        await test.drop()
    }

    /// A call reserved in one month and answered or given back in the next is of the month it
    /// was counted in: the old month's `X-Ratelimit-Remaining` began the new month as spent as
    /// the old one ended (for the whole month: the count only rises to the header's word), and
    /// a call given back came off the new month, which never counted it.
    @Test func aCallAnsweredAfterTheMonthsResetLeavesTheNewMonthAlone() async throws {
        let test = try await TestDatabase.create(poolSize: 2)
        _ = try await schema.apply(to: test.database)
        let february = Date(timeIntervalSince1970: 1_801_440_000)  // 2027-02-01T00:00:00Z
        let budget = UpstreamBudget(hourlyLimit: 100, monthlyLimit: 20_000, userHourlyLimit: 100, database: test.database)
        func monthUsed() async throws -> Int {
            try await test.database.query("SELECT month_used FROM upstream_budget")[0].decode("month_used")
        }
        guard case .granted(let answered) = try await budget.reserve(userId: "u", now: february - 2),
              case .granted(let notSent) = try await budget.reserve(userId: "u", now: february - 1)
        else { Issue.record("no call granted"); return }
        #expect(try await monthUsed() == 2)

        await budget.believe(.init(limit: 20_000, remaining: 12, reset: february), of: answered, now: february + 0.4)
        await budget.giveBack(notSent, now: february + 0.5)
        #expect(try await budget.reserve(userId: "u", now: february + 1).isGranted)
        #expect(try await monthUsed() == 1)
        #expect(budget.remaining?.month == 19_999)
        await test.drop()
    }

    @Test func remainingZeroStopsCallsUntilTheReset() async throws {
        let pexels = FakePexels()
        try await ImagesTestService.run(pexels: pexels) { service, client in
            let token = try await service.token()
            let reset = service.clock.now() + 600
            pexels.answer { $0.rateLimit = (limit: 20_000, remaining: 0, reset: reset) }
            #expect(try await client.search("last one", token: token).status == .ok)

            let refused = try await client.search("one more", token: token)
            #expect(refused.status == .serviceUnavailable)
            #expect(refused.problem?.code == "budget_spent")
            #expect(refused.headers[.retryAfter] == "600")
            #expect(pexels.callCount == 1)

            service.clock.advance(by: 601)
            pexels.answer { $0.rateLimit = (limit: 20_000, remaining: 19_999, reset: reset + 30 * 86_400) }
            #expect(try await client.search("one more", token: token).status == .ok)
            #expect(pexels.callCount == 2)
        }
    }

    @Test func moreRemainingThanCountedDoesNotRaiseTheBudget() async throws {
        let pexels = FakePexels()
        try await ImagesTestService.run(pexels: pexels, environment: ["PEXELS_MONTHLY_LIMIT": "2"]) { service, client in
            let token = try await service.token()
            pexels.answer { $0.rateLimit = (limit: 20_000, remaining: 19_000, reset: service.clock.now() + 86_400) }
            #expect(try await client.search("one", token: token).status == .ok)
            #expect(try await client.search("two", token: token).status == .ok)
            #expect(try await client.search("three", token: token).status == .serviceUnavailable)
            #expect(pexels.callCount == 2)
        }
    }

    @Test func anUpstream429StopsCallsForTheWindow() async throws {
        let pexels = FakePexels()
        pexels.answer { $0.status = 429 }
        try await ImagesTestService.run(pexels: pexels) { service, client in
            let token = try await service.token()
            let limited = try await client.search("red", token: token)
            #expect(limited.status == .serviceUnavailable)
            #expect(limited.problem?.code == "upstream_rate_limited")
            #expect(limited.headers[.retryAfter] == "3600")

            pexels.answer { $0.status = 200 }
            service.clock.advance(by: 1800)
            let meanwhile = try await client.search("green", token: token)
            #expect(meanwhile.status == .serviceUnavailable)
            #expect(meanwhile.headers[.retryAfter] == "1800")
            #expect(pexels.callCount == 1)
            #expect(service.metric("images_upstream_calls_total{status=\"429\"}") == 1)

            service.clock.advance(by: 1800)
            #expect(try await client.search("green", token: token).status == .ok)
            #expect(pexels.callCount == 2)
        }
    }

    /// A call that never reached the provider (no connection) costs nothing: a user retrying
    /// through an outage spent their allowance, then everybody's hour, on calls the provider
    /// never saw, and was refused once it was back.
    @Test func callsThatNeverReachedTheProviderSpendNoBudgetAndNoAllowance() async throws {
        let closedPort = try TestBroker.freePort()
        let environment = ["PEXELS_BASE_URL": "http://127.0.0.1:\(closedPort)", "PEXELS_HOURLY_LIMIT": "2", "IMAGES_USER_HOURLY_MISSES": "2"]
        try await ImagesTestService.run(pexels: FakePexels(), environment: environment) { service, client in
            let token = try await service.token()
            for query in ["one", "two", "three", "four"] {
                let response = try await client.search(query, token: token)
                #expect(response.status == .serviceUnavailable)
                #expect(response.problem?.code == "upstream_unreachable", "\(query)")
            }
            let counted = try await service.harness.database.query("SELECT count(*) AS n FROM upstream_calls")[0].decode("n", as: Int.self)
            #expect(counted == 0)
        }
    }

    @Test func aUserPastTheAllowanceGets429WhileOthersStillGetAnswers() async throws {
        let pexels = FakePexels()
        try await ImagesTestService.run(pexels: pexels, environment: ["IMAGES_USER_HOURLY_MISSES": "2"]) { service, client in
            let greedy = try await service.token()
            let other = try await service.token()
            #expect(try await client.search("one", token: greedy).status == .ok)
            service.clock.advance(by: 100)
            #expect(try await client.search("two", token: greedy).status == .ok)
            let third = try await client.search("three", token: greedy)
            #expect(third.status == .tooManyRequests)
            #expect(third.problem?.code == "rate_limited")
            #expect(third.headers[.retryAfter] == "3500")
            #expect(pexels.callCount == 2)

            #expect(try await client.search("three", token: other).status == .ok)
            #expect(try await client.search("four", token: other).status == .ok)
            // Hits are never limited: what others asked, and what the greedy user asked before.
            #expect(try await client.search("three", token: greedy).status == .ok)
            #expect(try await client.search("one", token: greedy).status == .ok)
            #expect(try await client.images("/api/images/curated", token: greedy).status == .tooManyRequests)
            #expect(pexels.callCount == 4)
            #expect(service.metric("images_user_limited_total") == 2)

            service.clock.advance(by: 3500)
            #expect(try await client.images("/api/images/curated", token: greedy).status == .ok)
        }
    }
}

/// Two instances of the service share one budget and one allowance per user: together they
/// stay within Pexels' limits, as one instance does.
@Suite struct SharedBudgetTests {
    @Test func twoInstancesSpendOneHourlyBudgetAndOneAllowance() async throws {
        let pexels = FakePexels()
        try await ImagesTestService.run(pexels: pexels, environment: ["PEXELS_HOURLY_LIMIT": "5", "IMAGES_USER_HOURLY_MISSES": "3"]) {
            service, first in
            try await service.anotherInstance().test(.router) { second in
                let clients = [first, second]
                // One user, alternating instances: the third call is their last this hour.
                let greedy = try await service.token()
                var greedyStatuses: [HTTPResponse.Status] = []
                for call in 0..<4 { greedyStatuses.append(try await clients[call % 2].search("greedy \(call)", token: greedy).status) }
                #expect(greedyStatuses == [.ok, .ok, .ok, .tooManyRequests])
                // Others, alternating too: two more calls spend the hour's five.
                var others: [HTTPResponse.Status] = []
                for call in 0..<4 { others.append(try await clients[call % 2].search("other \(call)", token: try await service.token()).status) }
                #expect(others == [.ok, .ok, .serviceUnavailable, .serviceUnavailable])
                #expect(pexels.callCount == 5)
            }
        }
    }
}

extension UpstreamBudget.Reservation {
    var isGranted: Bool {
        if case .granted = self { true } else { false }
    }
}
