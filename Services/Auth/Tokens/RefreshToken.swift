import Crypto
import ExtrasBase64
import Foundation

/// Refresh tokens: `<session id>.<secret>`, the secret 32 random bytes, base64url. Only their
/// SHA-256 is stored; with 256 bits of entropy a fast hash is enough (nothing to guess, nothing
/// to brute-force). A token names its session so that its row can go once it is spent:
/// presented again, the name alone says whose tokens may be stolen (a client refreshing in a
/// loop had kept a row per refresh, for 30 days). Tokens issued before they named their session
/// are a secret alone.
enum RefreshToken {
    /// A new token's secret.
    static func secret() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return String(base64Encoding: bytes, options: [.base64UrlAlphabet, .omitPaddingCharacter])
    }

    static func token(session sessionId: String, secret: String) -> String {
        sessionId + "." + secret
    }

    /// The whole token, session and all: pods of the release before, during a rolling update,
    /// look tokens up by it too.
    static func hash(_ token: String) -> [UInt8] {
        Array(SHA256.hash(data: Data(token.utf8)))
    }

    /// What a client presented: its hash, and the session it names (a session id as we make
    /// them, lowercase UUIDs; nil for a token of the earlier form, or junk).
    static func presented(_ token: String) -> PresentedRefreshToken {
        let named = token.split(separator: ".", maxSplits: 1).first.map(String.init)
        let sessionId = named.flatMap { UUID(uuidString: $0)?.uuidString.lowercased() == $0 ? $0 : nil }
        return PresentedRefreshToken(sessionId: sessionId, hash: hash(token))
    }
}
