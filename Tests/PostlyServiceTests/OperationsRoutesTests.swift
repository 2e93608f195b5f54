import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOPosix
import PostlyKafka
import PostlyPostgres
@testable import PostlyService
import Synchronization
import Testing
import TestSupport

@Suite struct OperationsRoutesTests {
    struct Down: Error {}

    @Test func liveAnswers200() async throws {
        try await TestApplication().test { client in
            try await client.execute(uri: "/health/live", method: .get) { response in
                #expect(response.status == .ok)
            }
        }
    }

    /// A check that does not stop when cancelled (a blocking C call: libpq waiting on a stalled
    /// server) still fails at its deadline: the round of checks does not wait for it, so
    /// readiness turns instead of reporting the last good round for as long as the stall lasts.
    @Test func aCheckThatIgnoresCancellationFailsAtItsDeadline() async throws {
        let stalled = DispatchSemaphore(value: 0)
        let checks = [
            ReadinessCheck(name: "database") { try await NIOThreadPool.singleton.runIfActive { _ = stalled.wait(timeout: .now() + 6) } },
            ReadinessCheck(name: "broker") {},
        ]
        let started = ContinuousClock.now
        let failing = await ReadinessMonitor.failingNames(of: checks)
        let answered = started.duration(to: .now)
        stalled.signal()
        #expect(failing == ["database"])
        // At the 2 s deadline, not when the stalled call let go (6 s).
        #expect(answered < .seconds(4), "\(answered)")
    }

    /// A pool whose every connection is leased, its statements coming back, is a database that
    /// answers: the ping waited behind the requests, past the check's 2 s, and a busy instance
    /// was taken out of service.
    @Test func aBusyPoolWhoseStatementsComeBackIsReady() async throws {
        try await TestDatabase.with(poolSize: 1) { database in
            try await withThrowingDiscardingTaskGroup { group in
                // 3 s of statements, one after the other.
                for _ in 0..<60 { group.addTask { _ = try await database.query("SELECT pg_sleep(0.05)") } }
                try await Task.sleep(for: .milliseconds(300))
                #expect(await ReadinessMonitor.failingNames(of: [.database(database)]) == [])
            }
        }
    }

    @Test func readyAnswers503NamingTheDependencyThatIsDown() async throws {
        let checks = [
            ReadinessCheck(name: "database") {},
            ReadinessCheck(name: "broker") { throw Down() },
        ]
        try await TestApplication(readiness: checks).test { client in
            let settled = try await eventually(within: .seconds(5)) {
                try await client.execute(uri: "/health/ready", method: .get) { response in
                    response.status == .serviceUnavailable && response.headers[.retryAfter] != nil
                        && response.problem?.detail.contains("broker") == true && response.problem?.detail.contains("database") == false
                }
            }
            #expect(settled)
        }
    }

    /// An orchestrator asks `/health/serving`: a broker outage must not take the instance out
    /// of service (its writes still succeed into the outbox); a database outage does.
    @Test func servingAsksEverythingButTheBroker() async throws {
        let brokerDown = [ReadinessCheck(name: "database") {}, ReadinessCheck(name: "broker") { throw Down() }]
        try await TestApplication(readiness: brokerDown).test { client in
            let settled = try await eventually(within: .seconds(5)) {
                try await client.execute(uri: "/health/ready", method: .get) { $0.problem?.detail == "Not ready: broker unreachable" }
            }
            #expect(settled)
            #expect(try await client.execute(uri: "/health/serving", method: .get) { $0.status } == .ok)
        }
        let databaseDown = [ReadinessCheck(name: "database") { throw Down() }, ReadinessCheck(name: "broker") {}]
        try await TestApplication(readiness: databaseDown).test { client in
            let settled = try await eventually(within: .seconds(5)) {
                try await client.execute(uri: "/health/serving", method: .get) { response in
                    response.status == .serviceUnavailable && response.problem?.detail == "Not serving: database unreachable"
                }
            }
            #expect(settled)
        }
    }

    /// A service started before the auth service answered 503 to every signed-in request for
    /// up to 5 s while it said it was ready (the system tests' first comment, in CI): until the
    /// keys are known it is neither ready nor serving, and it is both once they are.
    @Test func anInstanceWithoutTheAuthKeysIsNeitherReadyNorServing() async throws {
        let issuer = try await TestTokenIssuer()
        let authAnswers = Mutex(false)
        let verifier = AccessTokenVerifier(configuration: .init(), denyList: SessionDenyList(), logger: Logger(label: "test")) {
            guard authAnswers.withLock({ $0 }) else { throw Down() }
            return issuer.jwks
        }
        let checks = [ReadinessCheck(name: "database") {}, ReadinessCheck(name: "broker") {}, .tokenKeys(verifier)]
        try await TestApplication(readiness: checks).test { client in
            let notServing = try await eventually(within: .seconds(5)) {
                try await client.execute(uri: "/health/serving", method: .get) { $0.problem?.detail == "Not serving: auth keys unreachable" }
            }
            #expect(notServing)
            #expect(try await client.execute(uri: "/health/ready", method: .get) { $0.problem?.detail } == "Not ready: auth keys unreachable")
            await #expect(throws: (any Error).self) { try await verifier.refresh() }
            authAnswers.withLock { $0 = true }
            try await verifier.refresh()
            let serving = try await eventually(within: .seconds(5)) {
                try await client.execute(uri: "/health/serving", method: .get) { $0.status == .ok }
            }
            #expect(serving)
            #expect(try await client.execute(uri: "/health/ready", method: .get) { $0.status } == .ok)
        }
    }

    /// A checker with a short timeout (deploy/up.sh waits 2 s) must hear "not ready", not
    /// time out. The answer waited for the checks before: with the broker down (a blocking
    /// librdkafka call that cannot be cancelled) it took 2-3 s, and a dependency that hangs
    /// held it for the whole check timeout.
    @Test func readyAnswersAtOnceWhileADependencyHangs() async throws {
        let nothingListens = KafkaConfiguration(brokers: "127.0.0.1:1")
        let checks = [.broker(nothingListens), ReadinessCheck(name: "database") { try await Task.sleep(for: .seconds(30)) }]
        try await TestApplication(readiness: checks).test { client in
            for _ in 0..<10 {
                let started = ContinuousClock.now
                try await client.execute(uri: "/health/ready", method: .get) { response in
                    #expect(response.status == .serviceUnavailable)
                }
                let took = started.duration(to: .now)
                #expect(took < .milliseconds(500), "answered in \(took)")
                try await Task.sleep(for: .milliseconds(300))
            }
            // Once a round of checks ended, the answer names both.
            let settled = try await eventually(within: .seconds(5)) {
                try await client.execute(uri: "/health/ready", method: .get) { response in
                    response.problem?.detail == "Not ready: broker, database unreachable"
                }
            }
            #expect(settled)
        }
    }

    @Test func readyAnswers200WhenEverythingAnswers() async throws {
        try await TestApplication(readiness: [ReadinessCheck(name: "database") {}]).test { client in
            let settled = try await eventually(within: .seconds(5)) {
                try await client.execute(uri: "/health/ready", method: .get) { response in response.status == .ok }
            }
            #expect(settled)
        }
    }

    /// A service is ready within half a second of its start: every broker check against a
    /// broker that is up ends at once. A client made for each check took a second to destroy
    /// about one time in three, and the first round after a start waited for it.
    @Test func everyBrokerCheckAgainstALiveBrokerEndsAtOnce() async throws {
        let check = ReadinessCheck.broker(try testConfiguration())
        for _ in 0..<10 {
            let started = ContinuousClock.now
            try await check.check()
            let took = started.duration(to: .now)
            #expect(took < .milliseconds(500), "a check took \(took)")
        }
    }

    @Test func metricsAndOpenAPIAreServed() async throws {
        try await TestApplication().test { client in
            try await client.execute(uri: "/metrics", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType]?.hasPrefix("text/plain") == true)
            }
            try await client.execute(uri: "/openapi.json", method: .get) { response in
                #expect(response.status == .ok)
                #expect(String(buffer: response.body).contains("openapi"))
            }
        }
    }
}
