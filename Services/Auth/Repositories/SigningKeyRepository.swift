import Foundation
import PostlyPostgres

/// A token-signing key as stored: Ed25519's 32-byte private key.
public struct StoredSigningKey: Sendable, Hashable {
    public var kid: String
    public var privateKey: [UInt8]
    public var createdAt: Date
    public var retiredAt: Date?
}

/// Where the token-signing keys live.
public protocol SigningKeyRepository: Sendable {
    /// The keys to publish: the current one and those retired less than `publishedFor` ago.
    /// Generates and stores the first key (once, also with several instances starting at
    /// once) when there is none.
    func activeKeys(publishedFor: TimeInterval, generate: @Sendable () throws -> [UInt8]) async throws -> [StoredSigningKey]
}

public struct PostgresSigningKeyRepository: SigningKeyRepository {
    let database: Database

    public init(database: Database) {
        self.database = database
    }

    public func activeKeys(publishedFor: TimeInterval, generate: @Sendable () throws -> [UInt8]) async throws -> [StoredSigningKey] {
        try await database.transaction { connection in
            // Instances starting at once wait here, so only the first generates a key.
            try await connection.execute("SELECT pg_advisory_xact_lock(hashtext('postly-auth-signing-keys'))")
            let current = try await connection.query("SELECT count(*) AS n FROM signing_keys WHERE retired_at IS NULL")
            if try current.first?.decode("n", as: Int64.self) ?? 0 == 0 {
                let kid = UUID().uuidString.lowercased()
                let privateKey = try generate()
                try await connection.execute(
                    "INSERT INTO signing_keys (kid, algorithm, private_key) VALUES (\(kid), 'EdDSA', \(privateKey))")
            }
            let publishedSince = Date().addingTimeInterval(-publishedFor)
            let rows = try await connection.query(
                """
                SELECT kid, private_key, created_at, retired_at FROM signing_keys
                WHERE retired_at IS NULL OR retired_at > \(publishedSince)
                ORDER BY created_at DESC
                """)
            return try rows.map { row in
                StoredSigningKey(
                    kid: try row.decode("kid"), privateKey: try row.decode("private_key", as: [UInt8].self),
                    createdAt: try row.decode("created_at"), retiredAt: try row.decode("retired_at"))
            }
        }
    }
}
