import Crypto
import ExtrasBase64
import Foundation

/// Opaque refresh tokens: 32 random bytes, base64url. Only their SHA-256 is stored; with
/// 256 bits of entropy a fast hash is enough (nothing to guess, nothing to brute-force).
enum RefreshToken {
    static func generate() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return String(base64Encoding: bytes, options: [.base64UrlAlphabet, .omitPaddingCharacter])
    }

    static func hash(_ token: String) -> [UInt8] {
        Array(SHA256.hash(data: Data(token.utf8)))
    }
}
