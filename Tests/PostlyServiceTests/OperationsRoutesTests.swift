import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import PostlyKafka
import PostlyService
import Testing

@Suite struct OperationsRoutesTests {
    struct Down: Error {}

    @Test func liveAnswers200() async throws {
        try await TestApplication().test { client in
            try await client.execute(uri: "/health/live", method: .get) { response in
                #expect(response.status == .ok)
            }
        }
    }

    @Test func readyAnswers503NamingTheDependencyThatIsDown() async throws {
        let checks = [
            ReadinessCheck(name: "database") {},
            ReadinessCheck(name: "broker") { throw Down() },
        ]
        try await TestApplication(readiness: checks).test { client in
            try await client.execute(uri: "/health/ready", method: .get) { response in
                #expect(response.status == .serviceUnavailable)
                #expect(response.headers[.retryAfter] != nil)
                #expect(response.problem?.detail.contains("broker") == true)
                #expect(response.problem?.detail.contains("database") == false)
            }
        }
    }

    @Test func readyDoesNotHangOnADependencyThatDoesNotAnswer() async throws {
        let checks = [ReadinessCheck(name: "database") { try await Task.sleep(for: .seconds(30)) }]
        let started = ContinuousClock.now
        try await TestApplication(readiness: checks).test { client in
            try await client.execute(uri: "/health/ready", method: .get) { response in
                #expect(response.status == .serviceUnavailable)
            }
        }
        #expect(started.duration(to: .now) < .seconds(10))
    }

    /// A checker with a short timeout (deploy/up.sh waits 2 s) must hear "not ready", not
    /// time out: with the broker down the answer took 2-3 s before.
    @Test func readyAnswersQuicklyWhenTheBrokerIsDown() async throws {
        let nothingListens = KafkaConfiguration(brokers: "127.0.0.1:1")
        try await TestApplication(readiness: [.broker(nothingListens)]).test { client in
            let started = ContinuousClock.now
            try await client.execute(uri: "/health/ready", method: .get) { response in
                #expect(response.status == .serviceUnavailable)
                #expect(response.problem?.detail.contains("broker") == true)
            }
            let took = started.duration(to: .now)
            print("readiness with the broker down answered in \(took)")
            #expect(took < .seconds(1))
        }
    }

    @Test func readyAnswers200WhenEverythingAnswers() async throws {
        try await TestApplication(readiness: [ReadinessCheck(name: "database") {}]).test { client in
            try await client.execute(uri: "/health/ready", method: .get) { response in
                #expect(response.status == .ok)
            }
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
