import Foundation
import NIOPosix

/// Hashes and checks passwords with bcrypt off the cooperative thread pool (a hash at cost
/// 12 takes a quarter of a second of one core). An unknown email is checked against a dummy
/// hash of the same cost, so it takes as long as a wrong password.
public struct PasswordHasher: Sendable {
    public let cost: Int
    private let dummyHash: String

    public init(cost: Int) {
        self.cost = cost
        // Any password: it only has to cost the same as a real check.
        self.dummyHash = (try? BCrypt.hash(UUID().uuidString, cost: cost)) ?? ""
    }

    public func hash(_ password: String) async throws -> String {
        let cost = self.cost
        return try await NIOThreadPool.singleton.runIfActive { try BCrypt.hash(password, cost: cost) }
    }

    /// Whether `password` matches `hash`; with no hash (unknown email, Google-only account)
    /// it spends the same time and answers false.
    public func verify(_ password: String, against hash: String?) async throws -> Bool {
        let target = hash ?? dummyHash
        let matches = try await NIOThreadPool.singleton.runIfActive { (try? BCrypt.verify(password, against: target)) ?? false }
        return hash != nil && matches
    }
}
