import Foundation
import HummingbirdBcrypt
import NIOPosix

/// Hashes and checks passwords with bcrypt (HummingbirdBcrypt, OpenBSD's implementation) off
/// the event loops and the cooperative thread pool: a hash at cost 12 takes a quarter of a
/// second of one core. An unknown email is checked against a dummy hash of the same cost, so
/// it takes as long as a wrong password. Hashes are `$2b$`; `$2a$` ones verify too. Hashes
/// and checks queue in a `HashingQueue`, which turns callers away when too many wait.
public struct PasswordHasher: Sendable {
    /// The costs bcrypt accepts.
    public static let costRange = 4...31

    public let cost: Int
    private let dummyHash: String
    private let queue: HashingQueue

    /// - Parameters:
    ///   - concurrent: hashes running at once.
    ///   - waiting: hashes waiting for a turn; more answer 503.
    public init(cost: Int, concurrent: Int = 2, waiting: Int = 64) {
        self.cost = cost
        // Any password: it only has to cost the same as a real check.
        self.dummyHash = Bcrypt.hash(UUID().uuidString, cost: UInt8(cost))
        self.queue = HashingQueue(concurrent: concurrent, waiting: waiting)
    }

    public func hash(_ password: String) async throws -> String {
        let cost = UInt8(self.cost)
        return try await queue.run { try await NIOThreadPool.singleton.runIfActive { Bcrypt.hash(password, cost: cost) } }
    }

    /// Whether `password` matches `hash`; with no hash (unknown email, Google-only account)
    /// it spends the same time and answers false.
    public func verify(_ password: String, against hash: String?) async throws -> Bool {
        let target = hash ?? dummyHash
        let matches = try await queue.run { try await NIOThreadPool.singleton.runIfActive { Bcrypt.verify(password, hash: target) } }
        return hash != nil && matches
    }
}
