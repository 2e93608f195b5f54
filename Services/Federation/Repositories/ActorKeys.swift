import NIOPosix
import PostlyPostgres
import Synchronization

/// The key pairs of local actors, made on first need (a user whose actor nobody looks at never
/// costs a key) and kept in memory once read: signing a delivery parses no PEM.
final class ActorKeys: Sendable {
    private let database: Database
    private let cache = Mutex<[String: ActorKeyPair]>([:])

    init(database: Database) {
        self.database = database
    }

    /// The key pair of `actorId` (a user id, or `InstanceActor.id`), made and stored if it has
    /// none yet. Two instances making one at once keep the first stored.
    func keyPair(of actorId: String) async throws -> ActorKeyPair {
        if let cached = cache.withLock({ $0[actorId] }) { return cached }
        let keyPair: ActorKeyPair
        if let stored = try await stored(actorId) {
            keyPair = stored
        } else {
            // About a tenth of a second of arithmetic: off the cooperative pool.
            let made = try await NIOThreadPool.singleton.runIfActive { try ActorKeyPair.generate() }
            try await database.execute(
                """
                INSERT INTO actor_keys (actor_id, private_key_pem, public_key_pem)
                VALUES (\(actorId), \(made.privateKeyPEM), \(made.publicKeyPEM)) ON CONFLICT (actor_id) DO NOTHING
                """)
            keyPair = try await stored(actorId) ?? made
        }
        cache.withLock { $0[actorId] = keyPair }
        return keyPair
    }

    private func stored(_ actorId: String) async throws -> ActorKeyPair? {
        let rows = try await database.query("SELECT private_key_pem FROM actor_keys WHERE actor_id = \(actorId)")
        guard let pem = try rows.first?.decode("private_key_pem", as: String.self) else { return nil }
        return try ActorKeyPair(privateKeyPEM: pem)
    }
}
