import Crypto
import Foundation
import PostlyModels

/// The answer a refresh gave, kept with the spent refresh token for the grace in which the
/// same token may ask again (a retry, a second tab) and gets the same new pair. It is sealed
/// with a key only the spent token's holder can derive (HKDF of the token; the database holds
/// only the token's SHA-256), so the stored answer gives nobody else a session.
enum RefreshReplay {
    static func seal(_ session: AuthSession, with refreshToken: String) throws -> [UInt8] {
        let sealed = try ChaChaPoly.seal(try PostlyJSON.encode(session), using: key(of: refreshToken))
        return Array(sealed.combined)
    }

    static func open(_ sealed: [UInt8], with refreshToken: String) throws -> AuthSession {
        let box = try ChaChaPoly.SealedBox(combined: sealed)
        return try PostlyJSON.decoder().decode(AuthSession.self, from: try ChaChaPoly.open(box, using: key(of: refreshToken)))
    }

    private static func key(of refreshToken: String) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: Data(refreshToken.utf8)), info: Data("postly refresh replay".utf8), outputByteCount: 32)
    }
}
