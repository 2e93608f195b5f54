import NIOPosix
import PostlyPostgres
import Synchronization

/// The key pairs of local actors, made on first need (a user whose actor nobody looks at never
/// costs a key) and kept in memory once read: signing a delivery parses no PEM.
final class ActorKeys: Sendable {
    private let database: Database
    private let generate: @Sendable () throws -> ActorKeyPair
    /// Each actor's pair, or the one read or making of it that every caller waits for: a burst
    /// of requests for an actor without a key (its public document needs no sign-in) made a
    /// pair each, a tenth of a second of a shared thread apiece, and kept one.
    private let pairs = Mutex<[String: Task<ActorKeyPair, any Error>]>([:])

    /// The longest the reading or making of a pair may take, well within a request's.
    static let makingTime = Duration.seconds(10)

    init(database: Database, generate: @escaping @Sendable () throws -> ActorKeyPair = ActorKeyPair.generate) {
        self.database = database
        self.generate = generate
    }

    /// The key pair of `actorId` (a user id, or `InstanceActor.id`), made and stored if it has
    /// none yet. Two instances making one at once keep the first stored.
    func keyPair(of actorId: String) async throws -> ActorKeyPair {
        let pair = pairs.withLock { pairs in
            if let pair = pairs[actorId] { return pair }
            // The making is every waiter's, so it has a deadline of its own: the first caller's
            // passing had failed them all.
            let pair = Task {
                try await Database.$deadline.withValue(.now + Self.makingTime) { try await self.storedOrMade(actorId) }
            }
            pairs[actorId] = pair
            return pair
        }
        do {
            return try await pair.value
        } catch {
            // A failure (the database down) is not kept: the next caller tries again.
            pairs.withLock { pairs in
                if pairs[actorId] == pair { pairs[actorId] = nil }
            }
            throw error
        }
    }

    private func storedOrMade(_ actorId: String) async throws -> ActorKeyPair {
        if let stored = try await stored(actorId) { return stored }
        // About a tenth of a second of arithmetic: off the cooperative pool.
        let generate = self.generate
        let made = try await NIOThreadPool.singleton.runIfActive { try generate() }
        try await database.execute(
            """
            INSERT INTO actor_keys (actor_id, private_key_pem, public_key_pem)
            VALUES (\(actorId), \(made.privateKeyPEM), \(made.publicKeyPEM)) ON CONFLICT (actor_id) DO NOTHING
            """)
        return try await stored(actorId) ?? made
    }

    private func stored(_ actorId: String) async throws -> ActorKeyPair? {
        let rows = try await database.query("SELECT private_key_pem FROM actor_keys WHERE actor_id = \(actorId)")
        guard let pem = try rows.first?.decode("private_key_pem", as: String.self) else { return nil }
        return try ActorKeyPair(privateKeyPEM: pem)
    }
}
