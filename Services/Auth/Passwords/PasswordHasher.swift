import Crypto
import ExtrasBase64
import Foundation
import HummingbirdBcrypt
import Metrics
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
///
/// Hashes imported from the earlier Flask backend (`WerkzeugHash`: scrypt, pbkdf2) verify too,
/// at most `legacyConcurrent` at once (scrypt takes 32 MiB each); `needsRehash` tells the
/// login to replace them. Anything else (`plain`, md5, sha1, unparsable) never verifies, after
/// the time of a bcrypt check.
public struct PasswordHasher: Sendable {
    /// The costs bcrypt accepts.
    public static let costRange = 4...31
    /// The highest cost a stored hash is checked at, unless the configured cost is higher: an
    /// imported hash can carry any cost, and one of 31 held a hashing slot for a day and a
    /// half at each login attempt (every bcrypt hash the earlier backend made is below it).
    static let costCeiling = 14
    /// Marks a hash of the password's SHA-256 (every hash made now).
    static let preHashedPrefix = "$bcrypt-sha256$"

    public let cost: Int
    private let dummyHash: String
    private let queue: HashingQueue
    private let legacyQueue: HashingQueue
    /// Every password verified (bcrypt or an imported hash), a wrong one and an unknown
    /// account's included: what the login limits spare shows here.
    private let checks: Counter

    /// - Parameters:
    ///   - concurrent: hashes running at once.
    ///   - waiting: hashes waiting for a turn; more answer 503.
    ///   - legacyConcurrent: imported (Werkzeug) hashes checked at once.
    public init(cost: Int, concurrent: Int = 2, waiting: Int = 64, legacyConcurrent: Int = 2, metrics: any MetricsFactory = MetricsSystem.factory) {
        self.cost = cost
        self.checks = Counter(label: "postly_auth_password_checks_total", factory: metrics)
        // Any password: it only has to cost the same as a real check.
        self.dummyHash = Self.preHashedPrefix + Bcrypt.hash(UUID().uuidString, cost: UInt8(cost))
        self.queue = HashingQueue(concurrent: concurrent, waiting: waiting)
        self.legacyQueue = HashingQueue(concurrent: legacyConcurrent, waiting: waiting)
    }

    /// Whether `hash` is an imported one (not bcrypt): a login that verified it stores a new one.
    public static func needsRehash(_ hash: String) -> Bool {
        !isBcrypt(hash)
    }

    public func hash(_ password: String) async throws -> String {
        let (cost, input) = (UInt8(self.cost), Self.preHashed(password))
        return try await queue.run { try await NIOThreadPool.singleton.runIfActive { Self.preHashedPrefix + Bcrypt.hash(input, cost: cost) } }
    }

    /// Whether `password` matches `hash`; with no hash (unknown email, Google-only account)
    /// it spends the same time and answers false, as with a bcrypt hash past the cost ceiling.
    public func verify(_ password: String, against hash: String?) async throws -> Bool {
        if let hash, !Self.isBcrypt(hash) {
            guard let werkzeug = WerkzeugHash(hash) else {
                // Unverifiable: answered as a wrong password, in the time of one.
                _ = try await verify(password, against: nil)
                return false
            }
            checks.increment()
            return try await legacyQueue.run { try await NIOThreadPool.singleton.runIfActive { werkzeug.verify(password) } }
        }
        var target = hash ?? dummyHash
        var input = password
        if target.hasPrefix(Self.preHashedPrefix) {
            target.removeFirst(Self.preHashedPrefix.count)
            input = Self.preHashed(password)
        }
        // "$2b$NN$": past the ceiling, answered as a wrong password, in the time of one.
        if let stated = Int(target.dropFirst(4).prefix(2)), stated > max(cost, Self.costCeiling) {
            _ = try await verify(password, against: nil)
            return false
        }
        let (bcryptHash, bcryptInput) = (target, input)
        checks.increment()
        let matches = try await queue.run { try await NIOThreadPool.singleton.runIfActive { Bcrypt.verify(bcryptInput, hash: bcryptHash) } }
        return hash != nil && matches
    }

    static func isBcrypt(_ hash: String) -> Bool {
        hash.hasPrefix(preHashedPrefix) || hash.hasPrefix("$2a$") || hash.hasPrefix("$2b$") || hash.hasPrefix("$2y$")
    }

    /// What bcrypt hashes for a new password: SHA-256, base64 (standard alphabet, padded).
    static func preHashed(_ password: String) -> String {
        Base64.encodeToString(bytes: Array(SHA256.hash(data: Data(password.utf8))))
    }
}
