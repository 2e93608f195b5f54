import Foundation
import JWTKit

/// The claims of a Google ID token that sign-in uses.
struct GoogleIDTokenClaims: JWTPayload {
    enum CodingKeys: String, CodingKey {
        case iss, sub, aud, exp, email, name, picture
        case emailVerified = "email_verified"
    }

    var iss: IssuerClaim
    var sub: SubjectClaim
    var aud: AudienceClaim
    var exp: ExpirationClaim
    var email: String?
    /// A JSON boolean, or the strings "true"/"false" in older tokens.
    var emailVerified: BoolClaim?
    var name: String?
    var picture: String?

    func verify(using algorithm: some JWTAlgorithm) async throws {
        try exp.verifyNotExpired()
    }
}
