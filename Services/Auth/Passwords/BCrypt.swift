import Foundation

/// bcrypt (Provos and Mazières, the OpenBSD `$2b$` format) in Swift, so no C library has to
/// be wrapped for one function. Hashes are `$2b$<cost>$<22 chars salt><31 chars hash>`;
/// `$2a$` and `$2y$` hashes verify too (they are the same for passwords without the old
/// bugs' trigger). Passwords are cut at 72 bytes, as every bcrypt does.
public enum BCrypt {
    public enum Failure: Error, Equatable {
        case invalidCost
        case malformedHash
    }

    public static let costRange = 4...31

    /// A new salted hash of `password` at `cost` (2^cost rounds of key expansion).
    public static func hash(_ password: String, cost: Int) throws -> String {
        guard costRange.contains(cost) else { throw Failure.invalidCost }
        var salt = [UInt8](repeating: 0, count: 16)
        var generator = SystemRandomNumberGenerator()
        for index in salt.indices { salt[index] = UInt8.random(in: .min ... .max, using: &generator) }
        return format(cost: cost, salt: salt, digest: digest(password: Array(password.utf8), salt: salt, cost: cost))
    }

    /// Whether `password` matches `hash`, compared in constant time. A malformed hash throws.
    public static func verify(_ password: String, against hash: String) throws -> Bool {
        let (cost, salt, expected) = try parse(hash)
        let actual = digest(password: Array(password.utf8), salt: salt, cost: cost)
        guard actual.count == expected.count else { return false }
        var difference: UInt8 = 0
        for index in actual.indices { difference |= actual[index] ^ expected[index] }
        return difference == 0
    }

    /// The cost a hash was made with.
    public static func cost(of hash: String) throws -> Int { try parse(hash).cost }

    // MARK: - Format

    static func format(cost: Int, salt: [UInt8], digest: [UInt8]) -> String {
        let costText = cost < 10 ? "0\(cost)" : "\(cost)"
        return "$2b$\(costText)$" + encode(salt) + encode(digest)
    }

    static func parse(_ hash: String) throws -> (cost: Int, salt: [UInt8], digest: [UInt8]) {
        let bytes = Array(hash.utf8)
        guard bytes.count == 60, bytes[0] == UInt8(ascii: "$"), bytes[1] == UInt8(ascii: "2"),
            [UInt8(ascii: "a"), UInt8(ascii: "b"), UInt8(ascii: "y")].contains(bytes[2]), bytes[3] == UInt8(ascii: "$"),
            bytes[6] == UInt8(ascii: "$"),
            let cost = Int(String(decoding: bytes[4..<6], as: UTF8.self)), costRange.contains(cost),
            let salt = decode(bytes[7..<29], count: 16), let digest = decode(bytes[29..<60], count: 23)
        else { throw Failure.malformedHash }
        return (cost, salt, digest)
    }

    /// bcrypt's base64: its own alphabet, no padding.
    static let alphabet = Array("./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8)
    static let alphabetIndex: [Int8] = {
        var index = [Int8](repeating: -1, count: 256)
        for (position, character) in alphabet.enumerated() { index[Int(character)] = Int8(position) }
        return index
    }()

    static func encode(_ data: [UInt8]) -> String {
        var output: [UInt8] = []
        var index = 0
        while index < data.count {
            let first = data[index]
            output.append(alphabet[Int(first >> 2)])
            var carry = (first & 0x03) << 4
            guard index + 1 < data.count else { output.append(alphabet[Int(carry)]); break }
            let second = data[index + 1]
            output.append(alphabet[Int(carry | (second >> 4))])
            carry = (second & 0x0f) << 2
            guard index + 2 < data.count else { output.append(alphabet[Int(carry)]); break }
            let third = data[index + 2]
            output.append(alphabet[Int(carry | (third >> 6))])
            output.append(alphabet[Int(third & 0x3f)])
            index += 3
        }
        return String(decoding: output, as: UTF8.self)
    }

    static func decode(_ text: ArraySlice<UInt8>, count: Int) -> [UInt8]? {
        var sextets: [UInt8] = []
        for character in text {
            let value = alphabetIndex[Int(character)]
            guard value >= 0 else { return nil }
            sextets.append(UInt8(value))
        }
        var output: [UInt8] = []
        var index = 0
        while output.count < count, index + 1 < sextets.count {
            output.append(sextets[index] << 2 | sextets[index + 1] >> 4)
            if output.count < count, index + 2 < sextets.count { output.append(sextets[index + 1] << 4 | sextets[index + 2] >> 2) }
            if output.count < count, index + 3 < sextets.count { output.append(sextets[index + 2] << 6 | sextets[index + 3]) }
            index += 4
        }
        return output.count == count ? output : nil
    }

    // MARK: - EksBlowfish

    /// The 23 bytes of a bcrypt digest.
    static func digest(password: [UInt8], salt: [UInt8], cost: Int) -> [UInt8] {
        // `$2b$`: at most 72 bytes, then the terminating NUL of the C string.
        let key = Array(password.prefix(72)) + [0]
        var state = initialP + initialS
        var block: [UInt32] = [0x4f72_7068, 0x6561_6e42, 0x6568_6f6c, 0x6465_7253, 0x6372_7944, 0x6f75_6274]  // "OrpheanBeholderScryDoubt"
        state.withUnsafeMutableBufferPointer { state in
            expand(&state, key: key, salt: salt)
            let rounds = 1 << cost
            for _ in 0..<rounds {
                expand(&state, key: key, salt: nil)
                expand(&state, key: salt, salt: nil)
            }
            for index in stride(from: 0, to: 6, by: 2) {
                var left = block[index]
                var right = block[index + 1]
                for _ in 0..<64 { encrypt(&left, &right, state) }
                block[index] = left
                block[index + 1] = right
            }
        }
        var output: [UInt8] = []
        for word in block {
            output += [UInt8(word >> 24), UInt8(word >> 16 & 0xff), UInt8(word >> 8 & 0xff), UInt8(word & 0xff)]
        }
        return Array(output.prefix(23))
    }

    /// The next 32 bits of `data`, cycling.
    @inline(__always)
    static func streamWord(_ data: [UInt8], _ position: inout Int) -> UInt32 {
        var word: UInt32 = 0
        for _ in 0..<4 {
            word = word << 8 | UInt32(data[position])
            position = position + 1 == data.count ? 0 : position + 1
        }
        return word
    }

    /// Blowfish's key schedule, with bcrypt's salt mixed in when `salt` is given.
    static func expand(_ state: inout UnsafeMutableBufferPointer<UInt32>, key: [UInt8], salt: [UInt8]?) {
        var keyPosition = 0
        for index in 0..<18 { state[index] ^= streamWord(key, &keyPosition) }
        var left: UInt32 = 0
        var right: UInt32 = 0
        var saltPosition = 0
        for index in stride(from: 0, to: 18 + 1024, by: 2) {
            if let salt {
                left ^= streamWord(salt, &saltPosition)
                right ^= streamWord(salt, &saltPosition)
            }
            encrypt(&left, &right, UnsafeBufferPointer(state))
            state[index] = left
            state[index + 1] = right
        }
    }

    @inline(__always)
    static func encrypt(_ left: inout UInt32, _ right: inout UInt32, _ state: UnsafeMutableBufferPointer<UInt32>) {
        encrypt(&left, &right, UnsafeBufferPointer(state))
    }

    @inline(__always)
    static func encrypt(_ left: inout UInt32, _ right: inout UInt32, _ state: UnsafeBufferPointer<UInt32>) {
        var l = left
        var r = right
        @inline(__always) func f(_ x: UInt32) -> UInt32 {
            ((state[18 + Int(x >> 24)] &+ state[274 + Int(x >> 16 & 0xff)]) ^ state[530 + Int(x >> 8 & 0xff)]) &+ state[786 + Int(x & 0xff)]
        }
        for index in stride(from: 0, to: 16, by: 2) {
            l ^= state[index]
            r ^= f(l)
            r ^= state[index + 1]
            l ^= f(r)
        }
        l ^= state[16]
        r ^= state[17]
        left = r
        right = l
    }
}
