import Crypto
import CryptoExtras
import Foundation

/// A password hash as Werkzeug (the earlier Flask backend) stores it, kept by an import until
/// its first login replaces it: `scrypt:N:r:p$salt$hex` (Werkzeug's default) or
/// `pbkdf2:sha256|sha512:rounds$salt$hex`; the salt is used as its UTF-8 bytes. Derived with
/// swift-crypto's `KDF` and compared in constant time. Parameters beyond the bounds are
/// refused unchecked, so a hostile hash can cost neither memory nor minutes.
struct WerkzeugHash: Sendable, Hashable {
    enum Function: Sendable, Hashable {
        case scrypt(rounds: Int, blockSize: Int, parallelism: Int)
        case pbkdf2(KDF.Insecure.PBKDF2.HashFunction, rounds: Int)
    }

    /// scrypt's memory is 128·N·r·p bytes: these bounds keep one check under 2 GiB (Werkzeug's
    /// default, N = 2^15, r = 8, p = 1, takes 32 MiB).
    static let maximumScryptRounds = 1 << 20
    static let maximumScryptBlockSize = 16
    static let maximumScryptParallelism = 4
    /// Werkzeug 3.1 writes 1,000,000; twice that is still about a second.
    static let maximumPBKDF2Rounds = 2_000_000

    let function: Function
    let salt: [UInt8]
    let expected: [UInt8]

    /// nil for anything that is not a Werkzeug hash these bounds allow (`plain`, `md5`, `sha1`,
    /// bcrypt, garbage): such a password cannot be checked.
    init?(_ text: String) {
        let parts = text.split(separator: "$", omittingEmptySubsequences: false)
        guard parts.count == 3, let expected = Self.bytes(hex: parts[2]), (16...64).contains(expected.count) else { return nil }
        let method = parts[0].split(separator: ":", omittingEmptySubsequences: false)
        switch method.first {
        case "scrypt":
            guard method.count == 4, let n = Int(method[1]), let r = Int(method[2]), let p = Int(method[3]),
                n > 1, n & (n - 1) == 0, n <= Self.maximumScryptRounds,
                (1...Self.maximumScryptBlockSize).contains(r), (1...Self.maximumScryptParallelism).contains(p)
            else { return nil }
            function = .scrypt(rounds: n, blockSize: r, parallelism: p)
        case "pbkdf2":
            guard method.count == 3, let rounds = Int(method[2]), (1...Self.maximumPBKDF2Rounds).contains(rounds) else { return nil }
            switch method[1] {
            case "sha256": function = .pbkdf2(.sha256, rounds: rounds)
            case "sha512": function = .pbkdf2(.sha512, rounds: rounds)
            default: return nil
            }
        default:
            return nil
        }
        salt = Array(parts[1].utf8)
        self.expected = expected
    }

    /// Whether `password` derives the stored key. Slow by design (the KDF's work).
    func verify(_ password: String) -> Bool {
        let input = Array(password.utf8)
        let derived: SymmetricKey
        do {
            switch function {
            case .scrypt(let rounds, let blockSize, let parallelism):
                derived = try KDF.Scrypt.deriveKey(
                    from: input, salt: salt, outputByteCount: expected.count, rounds: rounds, blockSize: blockSize, parallelism: parallelism)
            case .pbkdf2(let hash, let rounds):
                // The checked API refuses fewer than 210,000 rounds, which Werkzeug 1.x-2.2 wrote.
                derived = try KDF.Insecure.PBKDF2.deriveKey(
                    from: input, salt: salt, using: hash, outputByteCount: expected.count, unsafeUncheckedRounds: rounds)
            }
        } catch {
            return false
        }
        // `SymmetricKey`'s `==` compares in constant time.
        return derived == SymmetricKey(data: expected)
    }

    static func bytes(hex: Substring) -> [UInt8]? {
        guard hex.utf8.count % 2 == 0, hex.allSatisfy(\.isHexDigit) else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(hex.utf8.count / 2)
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            guard let byte = UInt8(hex[index..<next], radix: 16) else { return nil }
            bytes.append(byte)
            index = next
        }
        return bytes
    }
}
