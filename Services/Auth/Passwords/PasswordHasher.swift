import Crypto
import ExtrasBase64
import Foundation
import HummingbirdBcrypt
import Metrics
import NIOPosix
import Synchronization

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
/// at most `legacyConcurrent` at once (scrypt takes 32 MiB each). Anything else (`plain`, md5,
/// sha1, unparsable) never verifies, after the time of a bcrypt check. Every hash cheaper than
/// one we make now (imported, `$2b$` of the password itself, a lower cost) answers no sooner
/// than ours would, so a login's time does not tell an account not signed into since the
/// import from an email nobody has (a hash slower than ours still takes longer), and
/// `needsRehash` tells the login to replace it.
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
    /// How long a check at `cost` takes here lately: what a cheaper hash is padded to.
    private let checkTime: RecentDuration
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
        let started = ContinuousClock.now
        self.dummyHash = Self.preHashedPrefix + Bcrypt.hash(UUID().uuidString, cost: UInt8(cost))
        self.checkTime = RecentDuration(started.duration(to: .now))
        self.queue = HashingQueue(concurrent: concurrent, waiting: waiting)
        self.legacyQueue = HashingQueue(concurrent: legacyConcurrent, waiting: waiting)
    }

    /// Whether `hash` is cheaper than one this hasher makes (imported, of the password itself,
    /// of a lower cost): a login that verified it stores a new one. One of a higher cost is
    /// kept, so instances of different costs (a rollout) do not rewrite each other's at every login.
    public func needsRehash(_ hash: String) -> Bool {
        !(hash.hasPrefix(Self.preHashedPrefix) && Self.statedCost(of: hash.dropFirst(Self.preHashedPrefix.count)) ?? 0 >= cost)
    }

    public func hash(_ password: String) async throws -> String {
        let (cost, input) = (UInt8(self.cost), Self.preHashed(password))
        return try await queue.run { try await NIOThreadPool.singleton.runIfActive { Self.preHashedPrefix + Bcrypt.hash(input, cost: cost) } }
    }

    /// Whether `password` matches `hash`; with no hash (unknown email, Google-only account)
    /// it spends the same time and answers false, as with a bcrypt hash past the cost ceiling.
    public func verify(_ password: String, against hash: String?) async throws -> Bool {
        let checked = try await check(password, against: hash)
        // A cheaper hash answers no sooner than ours: padded from when its turn began, outside
        // any turn; not cut short by cancellation, which would refund a checked guess.
        if let hash, needsRehash(hash) { try? await Task.sleep(until: checked.turnBegan + checkTime.value) }
        return checked.matches
    }

    /// A check's answer, and when its turn in the hashing queue began.
    private struct Checked {
        var matches: Bool
        var turnBegan: ContinuousClock.Instant
    }

    private func check(_ password: String, against hash: String?) async throws -> Checked {
        if let hash, !Self.isBcrypt(hash) {
            guard let werkzeug = WerkzeugHash(hash) else {
                // Unverifiable: answered as a wrong password, in the time of one.
                return Checked(matches: false, turnBegan: try await check(password, against: nil).turnBegan)
            }
            checks.increment()
            // Checked in a queue of its own, padded from when a turn of ours would begin.
            let turnBegan = try await queue.run { ContinuousClock.now }
            let matches = try await legacyQueue.run { try await NIOThreadPool.singleton.runIfActive { werkzeug.verify(password) } }
            return Checked(matches: matches, turnBegan: turnBegan)
        }
        var target = hash ?? dummyHash
        var input = password
        if target.hasPrefix(Self.preHashedPrefix) {
            target.removeFirst(Self.preHashedPrefix.count)
            input = Self.preHashed(password)
        }
        // Past the ceiling, answered as a wrong password, in the time of one.
        let stated = Self.statedCost(of: target[...])
        if let stated, stated > max(cost, Self.costCeiling) {
            return Checked(matches: false, turnBegan: try await check(password, against: nil).turnBegan)
        }
        let (bcryptHash, bcryptInput) = (target, input)
        checks.increment()
        let (matches, took, turnBegan) = try await queue.run {
            let turnBegan = ContinuousClock.now
            let (matches, took) = try await NIOThreadPool.singleton.runIfActive {
                let started = ContinuousClock.now
                return (Bcrypt.verify(bcryptInput, hash: bcryptHash), started.duration(to: .now))
            }
            return (matches, took, turnBegan)
        }
        if stated == cost { checkTime.record(took) }
        return Checked(matches: hash != nil && matches, turnBegan: turnBegan)
    }

    /// The cost a bcrypt hash states (`$2b$NN$...`).
    static func statedCost(of bcryptHash: Substring) -> Int? {
        Int(bcryptHash.dropFirst(4).prefix(2))
    }

    static func isBcrypt(_ hash: String) -> Bool {
        hash.hasPrefix(preHashedPrefix) || hash.hasPrefix("$2a$") || hash.hasPrefix("$2b$") || hash.hasPrefix("$2y$")
    }

    /// What bcrypt hashes for a new password: SHA-256, base64 (standard alphabet, padded).
    static func preHashed(_ password: String) -> String {
        Base64.encodeToString(bytes: Array(SHA256.hash(data: Data(password.utf8))))
    }
}

/// A moving average of durations, safe to share.
final class RecentDuration: Sendable {
    private let average: Mutex<Duration>

    init(_ first: Duration) {
        average = Mutex(first)
    }

    var value: Duration { average.withLock { $0 } }

    func record(_ sample: Duration) {
        average.withLock { $0 = $0 * 0.8 + sample * 0.2 }
    }
}
