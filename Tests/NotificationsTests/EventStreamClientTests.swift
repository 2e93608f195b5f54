import Testing
import TestSupport

/// The tests' stream client itself: a connection that fails is an error of the one test.
@Suite struct EventStreamClientTests {
    @Test func aRefusedConnectionIsAnErrorNotACrash() async throws {
        let nobody = try TestBroker.freePort()
        await #expect(throws: (any Error).self) {
            _ = try await EventStreamClient.open(port: nobody)
        }
    }
}
