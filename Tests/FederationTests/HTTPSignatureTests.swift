import Foundation
import PostlyService
import Testing

@testable import FederationService

/// HTTP Signatures against a vector made by another implementation: PyPI `httpsig` 1.3.0
/// (draft-cavage) signed `vector.body` as `POST /ap/users/ada/inbox` with `vector.privateKey`
/// and a fixed Date. PKCS #1 v1.5 is deterministic, so our signer must write the same
/// signature, and our checks must accept it and refuse every alteration.
@Suite struct HTTPSignatureTests {
    enum Vector {
        static let privateKey = """
            -----BEGIN RSA PRIVATE KEY-----
            MIIEpQIBAAKCAQEAsO88magNFktCkwAzb0AvT6P0OrxyG1tEyLqerDz86Sc+ttsk
            MOLD7HFGG+KvPPkMEj2EFAns1k5QIpjNzqyqpFE69nlo2iyp9BrJQwrYRa/deZ5B
            RmKyaJDVCzC4s1vFSKP8EsSN/Tsb7yWkjLJGHDOUYHDMMf+GhIi2CTbtQOog69xq
            7DEQHN7t9VUURqzvoyJ0KR0j7GRdwD8hAekYE2jvZbfxclU0OkkienDgEwoKjMdt
            t3RJ/UFTvaJmaM174TVGbtUajTUcjd27wMoQppXcEyoeW99yZ4tc1yXIy9zGJJZi
            o/4F+rYg0+E2UnsvYz13sABmG3u3SY9EMhar1QIDAQABAoIBAAEq+cGCOQs5i3Kz
            c2N2Wb7tlDOIDLvD/jVR+rFPL2nYOw3TbqQjobXvkyN6Jfx3ILPac+2lmXUvq/qS
            e3dJWftULZlfY0hfYkQiIiEfEvQ2IouGi86WYQWXgSR+BEDA0rxK7XjFPd0Fn8ap
            abI5DK/rzOdXD0NRjmEqaC3cOYmDufDq1mFIhnfeSdPKqxp/yv488EMUwghgrWFF
            kkdfRZvM3QAJJ4wktfZTt3T3ceoKY2q9lbxJ6qHXIL1pp1+jFfgR2B8YD7U09iwX
            jKLPplCidTbwr9G4zLsS/DsJAmuZUMNMZUq+elDEqjMSr2+St+PqGe0UdOtTm8Ew
            OkkK0sECgYEA9GZ9jvKcypbN4noMlcMmVpplrEAH6GOo3zX5dLtp9foR56gLTKgN
            3y5pJUcClP1cInLjM24AXD9jebstCuCZ92ysia+fwtcFo+e1n+w+BuwNI5Sm2TMy
            JKtkCy1XQ34Dz0mZ3H2hZx8ohYE7XKIw0wrnNUd8H/cn6L6x3XLK2sECgYEAuVUG
            HI6R50tTwJ8jeHKGD1M+xzVc+C/KL518Iykfnoe54RZmtqnfgjKUtmwnM19G9a93
            WhJsudtmqAdBdJwZg6w5UubZVl6MjZOhcH1vA8pZ3GhHvXIWbKHWwNvq9AEFettJ
            gJfTlckrfJspUmjWvG7UgSE5wgEZavILbcmjOhUCgYEAo8V6JawVvPvJAxZeEI0w
            x5+2ufI+Wk9N/iUhAEQGATqNfPpyd++1O/TRqJUo+cW9U6hA71mrDCW99viiekN/
            aPl9tNXm7J1Bvk+quXuJJQJQ26LlG27fDwt6grLjYuqyitj7LXFSEtQiRzQOH0jg
            Bsurm1xHpPPt3lzKu2YM4QECgYEAg+m/st3LffzAvS7IOXgScaAH5BTYepLRb3jB
            neksZ1Ml+89NBqD8xJgp/3oVoNwlDsR4yDSrDNLcS6b2cQCWrIEOQDKt6Wrc0fyN
            gRrWxLTnpxjWT0KAMYwz5gviPRDpDJw+wffPEyMf/84U6GJUzcR5Hvw+Nxc/Nz7W
            4asOsk0CgYEAwitCdgjOp+qkmPeeDHiG4qgpMosJE5TtS++VE+rxPBq33MZtZqHY
            MS9pzj2VetXubNTLFh6tonSbbG3T4XecA0Iv+uwFqioOR3wGNeHTrKfUG/JSQRAA
            5SOuFxxnX5RDseAXW10zxAlM/D5Vq/NMQVnFPCPTQHcGW0fdQTovcg0=
            -----END RSA PRIVATE KEY-----
            """
        static let publicKey = """
            -----BEGIN PUBLIC KEY-----
            MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAsO88magNFktCkwAzb0Av
            T6P0OrxyG1tEyLqerDz86Sc+ttskMOLD7HFGG+KvPPkMEj2EFAns1k5QIpjNzqyq
            pFE69nlo2iyp9BrJQwrYRa/deZ5BRmKyaJDVCzC4s1vFSKP8EsSN/Tsb7yWkjLJG
            HDOUYHDMMf+GhIi2CTbtQOog69xq7DEQHN7t9VUURqzvoyJ0KR0j7GRdwD8hAekY
            E2jvZbfxclU0OkkienDgEwoKjMdtt3RJ/UFTvaJmaM174TVGbtUajTUcjd27wMoQ
            ppXcEyoeW99yZ4tc1yXIy9zGJJZio/4F+rYg0+E2UnsvYz13sABmG3u3SY9EMhar
            1QIDAQAB
            -----END PUBLIC KEY-----
            """
        static let keyId = "https://remote.example/users/bob#main-key"
        static let body = #"{"@context":"https://www.w3.org/ns/activitystreams","actor":"https://remote.example/users/bob","id":"https://remote.example/follows/1","object":"https://postly.example/ap/users/ada","type":"Follow"}"#
        static let date = "Sun, 06 Nov 1994 08:49:37 GMT"
        static let digest = "SHA-256=GS0cI1A06pv7zNqtfVY4Drftmluo7ybJbEXAkMulYX8="
        static let signature =
            "cGPecAe1OwRtKqPX8CXyaP7IdMTUS3AmtYhKYBcaqrL30XxJOFpkUrGnwznDptniR0dhAeUNZlZJIi9SmxacvBDahJYUt52FIrYx/xSpG3S9nXeVY+bPoi8B2K8ZmJkGmOGNKZKWevgHIgQFYsSujzghuUBTswnmU8YO2doPeroxceuMmov9xjg5zoqTzEFZuuGxxtvN87x29fVpHPre8Y2DUa/KhQfgyTTE8FyPRuDP/9RNQK0E21PiYLAoxPbYZYmG2moh7eW+RSgZNipj+PCWdeLPz8RYNULx85g5PRQwcsBoSys9AUMbvO+GuQGVFqOGPaShr5cInKgZzS7VBA=="
        static let header = #"keyId="\#(keyId)",algorithm="rsa-sha256",signature="\#(signature)",headers="(request-target) host date digest""#
        static let signedDate = HTTPDate.parse(date)!

        static var request: SignedRequest {
            SignedRequest(
                method: "POST", target: "/ap/users/ada/inbox",
                headers: [("Host", "postly.example"), ("Date", date), ("Digest", digest), ("Signature", header)])
        }
    }

    /// The window as seen at the vector's own date.
    static let window: ClosedRange<TimeInterval> = -12 * 3600...3600

    @Test func ourSignerWritesTheSignatureHttpsigWrote() throws {
        let key = try ActorKeyPair(privateKeyPEM: Vector.privateKey)
        let headers = try HTTPSignature.sign(
            method: "POST", url: "https://postly.example/ap/users/ada/inbox", body: Array(Vector.body.utf8), keyId: Vector.keyId, key: key,
            date: Vector.signedDate)
        let byName = Dictionary(headers.map { ($0.name, $0.value) }) { first, _ in first }
        #expect(byName["Host"] == "postly.example")
        #expect(byName["Date"] == Vector.date)
        #expect(byName["Digest"] == Vector.digest)
        let signature = try HTTPSignature(header: try #require(byName["Signature"]))
        #expect(signature.keyId == Vector.keyId)
        #expect(signature.headers == ["(request-target)", "host", "date", "digest"])
        #expect(Data(signature.signature).base64EncodedString() == Vector.signature)
        #expect(key.publicKeyPEM.trimmingCharacters(in: .whitespacesAndNewlines) == Vector.publicKey)
    }

    @Test func httpsigsSignatureVerifies() throws {
        let signature = try HTTPSignature(header: Vector.header)
        let signingString = try signature.checkedSigningString(
            of: Vector.request, body: Array(Vector.body.utf8), now: Vector.signedDate, window: Self.window)
        #expect(signingString == "(request-target): post /ap/users/ada/inbox\nhost: postly.example\ndate: \(Vector.date)\ndigest: \(Vector.digest)")
        #expect(signature.isValid(signingString: signingString, key: try PublicKey(pem: Vector.publicKey)))
    }

    @Test func everyAlterationIsRefusedWithItsReason() throws {
        let signature = try HTTPSignature(header: Vector.header)
        let body = Array(Vector.body.utf8)
        let key = try PublicKey(pem: Vector.publicKey)

        // The body changed after signing: its digest no longer matches.
        #expect(throws: SignatureError.digestMismatch("the body does not match its Digest")) {
            try signature.checkedSigningString(of: Vector.request, body: body + [0x20], now: Vector.signedDate, window: Self.window)
        }
        // 13 hours later the Date is outside the window.
        #expect(throws: SignatureError.dateOutsideWindow) {
            try signature.checkedSigningString(of: Vector.request, body: body, now: Vector.signedDate.addingTimeInterval(13 * 3600), window: Self.window)
        }
        // Another path (a host or date changed the same way): the signature no longer verifies.
        var elsewhere = Vector.request
        elsewhere.target = "/ap/inbox"
        let other = try signature.checkedSigningString(of: elsewhere, body: body, now: Vector.signedDate, window: Self.window)
        #expect(!signature.isValid(signingString: other, key: key))
        // A signature that leaves the digest out does not protect the body.
        let partial = try HTTPSignature(header: Vector.header.replacingOccurrences(of: " digest\"", with: "\""))
        #expect(throws: SignatureError.headerNotSigned("digest")) {
            try partial.checkedSigningString(of: Vector.request, body: body, now: Vector.signedDate, window: Self.window)
        }
        #expect(throws: SignatureError.unsupportedAlgorithm("hmac-sha256")) {
            try HTTPSignature(header: Vector.header.replacingOccurrences(of: "rsa-sha256", with: "hmac-sha256"))
        }
        #expect(throws: SignatureError.malformed("no keyId")) { try HTTPSignature(header: #"signature="AAAA""#) }
    }

    /// Checked before any key is fetched, so anyone can send it: a year out of Int32's range
    /// once stopped the process.
    @Test func aDateThatIsNoHTTPDateIsRefused() throws {
        let signature = try HTTPSignature(header: Vector.header)
        var request = Vector.request
        request.headers = request.headers.map { $0.name == "Date" ? (name: $0.name, value: "Sun, 06 Nov -2147483648 08:49:37 GMT") : $0 }
        #expect(throws: SignatureError.coveredHeaderMissing("date")) {
            try signature.checkedSigningString(of: request, body: Array(Vector.body.utf8), now: Vector.signedDate, window: Self.window)
        }
    }
}
