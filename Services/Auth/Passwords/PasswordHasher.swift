import Crypto
import ExtrasBase64
import Foundation
import HummingbirdBcrypt
import NIOPosix

/// Hashes and checks passwords with bcrypt (HummingbirdBcrypt, OpenBSD's implementation) off
/// the event loops and the cooperative thread pool: a hash at cost 12 takes a quarter of a
/// second of one core. An unknown email is checked against a dummy hash of the same cost, so
/// it takes as long as a wrong password. Hashes and checks queue in a `HashingQueue`, which
/// turns callers away when too many wait.
///
/// bcrypt reads only the first 72 bytes, so every new password is first hashed with SHA-256
/// and base64-encoded (44 bytes, no NUL) and the result stored as `$bcrypt-sha256$` followed
/// by the bcrypt hash of that: every byte of a long password counts. Hashes stored before
/// (`$2b$`, `$2a$`, of the password itself) keep verifying.
public struct PasswordHasher: Sendable {
    /// The costs bcrypt accepts.
    public static let costRange = 4...31
    /// Marks a hash of the password's SHA-256 (every hash made now).
    static let preHashedPrefix = "$bcrypt-sha256$"

    public let cost: Int
    private let dummyHash: String
    private let queue: HashingQueue

    /// - Parameters:
    ///   - concurrent: hashes running at once.
    ///   - waiting: hashes waiting for a turn; more answer 503.
    public init(cost: Int, concurrent: Int = 2, waiting: Int = 64) {
        self.cost = cost
        // Any password: it only has to cost the same as a real check.
        self.dummyHash = Self.preHashedPrefix + Bcrypt.hash(UUID().uuidString, cost: UInt8(cost))
        self.queue = HashingQueue(concurrent: concurrent, waiting: waiting)
    }

    public func hash(_ password: String) async throws -> String {
        let (cost, input) = (UInt8(self.cost), Self.preHashed(password))
        return try await queue.run { try await NIOThreadPool.singleton.runIfActive { Self.preHashedPrefix + Bcrypt.hash(input, cost: cost) } }
    }

    /// Whether `password` matches `hash`; with no hash (unknown email, Google-only account)
    /// it spends the same time and answers false.
    public func verify(_ password: String, against hash: String?) async throws -> Bool {
        var target = hash ?? dummyHash
        var input = password
        if target.hasPrefix(Self.preHashedPrefix) {
            target.removeFirst(Self.preHashedPrefix.count)
            input = Self.preHashed(password)
        }
        let (bcryptHash, bcryptInput) = (target, input)
        let matches = try await queue.run { try await NIOThreadPool.singleton.runIfActive { Bcrypt.verify(bcryptInput, hash: bcryptHash) } }
        return hash != nil && matches
    }

    /// What bcrypt hashes for a new password: SHA-256, base64.
    static func preHashed(_ password: String) -> String {
        String(base64Encoding: Array(SHA256.hash(data: Data(password.utf8))))
    }
}
