import Testing

@testable import AuthService

@Suite struct BCryptTests {
    /// Made by libxcrypt's `crypt()` (Python's `crypt` module): this implementation must agree.
    static let vectors: [(password: String, hash: String)] = [
        ("password", "$2b$04$Ti2a7puIu4VnLmM.JZD/mOBEeKTdOjyPkR/jI/OKE5HbTnw/B4/va"),
        ("", "$2b$04$mtWJWJsXRES6QJGBZnER6ujQXh9NxV8pnNw8mNGPYsEBT1BgcWaWK"),
        ("U*U", "$2b$04$BIsa1Z8yVlZnQB1wm.UKcOpnAEn02hG3Za6egbQb8pOH1B6xD7Zt6"),
        ("correct horse battery staple \u{e9}", "$2b$04$8.A6yv0idymArZu7pABO..d62cXQFUTFm.rmHDejsMtkYT/y.wzX2"),
        (String(repeating: "a", count: 80), "$2b$04$6ltYli3IcKmXsU.6WEvbyu3o1jz0ay/eBupklgIUZtLb0FzqnE1im"),
    ]

    @Test func agreesWithTheSystemBcrypt() throws {
        for vector in Self.vectors {
            #expect(try BCrypt.verify(vector.password, against: vector.hash), "\(vector.password)")
            #expect(try !BCrypt.verify("x" + vector.password, against: vector.hash))
        }
    }

    @Test func reproducesTheSystemHashFromItsSalt() throws {
        let (cost, salt, _) = try BCrypt.parse(Self.vectors[0].hash)
        let digest = BCrypt.digest(password: Array("password".utf8), salt: salt, cost: cost)
        #expect(BCrypt.format(cost: cost, salt: salt, digest: digest) == Self.vectors[0].hash)
    }

    @Test func newHashesAreSaltedAndVerify() throws {
        let first = try BCrypt.hash("s3cret pass", cost: 4)
        let second = try BCrypt.hash("s3cret pass", cost: 4)
        #expect(first.hasPrefix("$2b$04$") && first.count == 60)
        #expect(first != second, "a new salt every time")
        #expect(try BCrypt.verify("s3cret pass", against: first))
        #expect(try !BCrypt.verify("s3cret pasS", against: first))
        #expect(try BCrypt.cost(of: first) == 4)
    }

    @Test func onlyTheFirst72BytesCount() throws {
        let hash = try BCrypt.hash(String(repeating: "a", count: 72) + "b", cost: 4)
        #expect(try BCrypt.verify(String(repeating: "a", count: 72) + "c", against: hash))
        #expect(try !BCrypt.verify(String(repeating: "a", count: 71), against: hash))
    }

    @Test func rejectsMalformedHashesAndCosts() {
        #expect(throws: BCrypt.Failure.malformedHash) { try BCrypt.verify("x", against: "$2b$04$short") }
        #expect(throws: BCrypt.Failure.malformedHash) { try BCrypt.verify("x", against: "$1$" + String(repeating: "a", count: 57)) }
        #expect(throws: BCrypt.Failure.invalidCost) { try BCrypt.hash("x", cost: 3) }
    }
}
