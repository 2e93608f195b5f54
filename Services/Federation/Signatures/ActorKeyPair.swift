import Crypto
import CryptoExtras
import Foundation

/// An actor's RSA-2048 key pair, as ActivityPub servers use them: PKCS #1 v1.5 signatures over
/// SHA-256 (`rsa-sha256`), the public key published as SubjectPublicKeyInfo PEM. All of it is
/// swift-crypto's; nothing here is cryptography of our own.
struct ActorKeyPair: Sendable {
    let privateKey: _RSA.Signing.PrivateKey

    static func generate() throws -> ActorKeyPair {
        ActorKeyPair(privateKey: try _RSA.Signing.PrivateKey(keySize: .bits2048))
    }

    init(privateKey: _RSA.Signing.PrivateKey) {
        self.privateKey = privateKey
    }

    init(privateKeyPEM: String) throws {
        privateKey = try _RSA.Signing.PrivateKey(pemRepresentation: privateKeyPEM)
    }

    var privateKeyPEM: String { privateKey.pemRepresentation }
    var publicKeyPEM: String { privateKey.publicKey.pemRepresentation }

    /// The `rsa-sha256` signature of `data`.
    func sign(_ data: some DataProtocol) throws -> [UInt8] {
        Array(try privateKey.signature(for: data, padding: .insecurePKCS1v1_5).rawRepresentation)
    }
}

/// A remote actor's public key, from the PEM its actor document publishes.
struct PublicKey: Sendable {
    let key: _RSA.Signing.PublicKey

    init(pem: String) throws {
        key = try _RSA.Signing.PublicKey(pemRepresentation: pem)
    }

    /// Whether `signature` is the `rsa-sha256` signature of `data` by this key.
    func isValidSignature(_ signature: [UInt8], for data: some DataProtocol) -> Bool {
        key.isValidSignature(_RSA.Signing.RSASignature(rawRepresentation: signature), for: SHA256.hash(data: data), padding: .insecurePKCS1v1_5)
    }
}
