import Foundation
import Testing

@testable import AuthService

/// Passwords hashed by the earlier Flask backend (Werkzeug, `Tests/Fixtures/passwords/`,
/// made by Werkzeug 3.1.8 itself) verify, and nothing else does.
@Suite struct WerkzeugHashTests {
    struct Vector: Decodable {
        var method: String
        var password: String
        var hash: String
        var verifies: Bool
    }

    static let vectors: [Vector] = {
        struct File: Decodable { var hashes: [Vector] }
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/passwords/werkzeug-hashes.json")
        return try! JSONDecoder().decode(File.self, from: Data(contentsOf: url)).hashes
    }()

    @Test func werkzeugHashesVerifyTheirPasswordsOnly() async throws {
        let hasher = PasswordHasher(cost: 4)
        #expect(Set(Self.vectors.map(\.method)).isSuperset(of: ["scrypt", "pbkdf2:sha256:600000", "pbkdf2:sha256:150000", "plain"]))
        for vector in Self.vectors {
            #expect(try await hasher.verify(vector.password, against: vector.hash) == vector.verifies, "\(vector.method)")
            #expect(try await !hasher.verify(vector.password + "x", against: vector.hash), "\(vector.method)")
            #expect(hasher.needsRehash(vector.hash))
        }
        #expect(!hasher.needsRehash(try await hasher.hash("correct horse battery")))
        #expect(PasswordHasher(cost: 5).needsRehash(try await hasher.hash("correct horse battery")), "a lower cost")
        #expect(!hasher.needsRehash(try await PasswordHasher(cost: 5).hash("correct horse battery")), "a higher cost is kept")
    }

    @Test func hostileOrUnknownHashesAreRefusedUnchecked() {
        let hex = String(repeating: "ab", count: 64)
        for refused in [
            "scrypt:2097152:8:1$salt$\(hex)",  // N > 2^20: 2 GiB
            "scrypt:32768:17:1$salt$\(hex)",  // r > 16
            "scrypt:32768:8:5$salt$\(hex)",  // p > 4
            "scrypt:30000:8:1$salt$\(hex)",  // N not a power of two
            "pbkdf2:sha256:100000000$salt$\(String(repeating: "ab", count: 32))",  // minutes of CPU
            "pbkdf2:md5:1000$salt$\(String(repeating: "ab", count: 16))",
            "md5$salt$\(String(repeating: "ab", count: 16))", "sha1$salt$\(String(repeating: "ab", count: 20))", "plain$$x",
            "scrypt:32768:8:1$salt$nothex", "scrypt:32768:8:1$salt$+f\(hex.dropFirst(2))", "scrypt:32768:8:1", "", "$",
        ] {
            #expect(WerkzeugHash(refused) == nil, "\(refused)")
        }
        #expect(WerkzeugHash(Self.vectors[0].hash) != nil)
    }
}
