/// The bodies of the auth routes. Fields are optional so a missing one answers 422 with
/// the field named, like an empty one.
struct RegisterRequest: Decodable {
    var name: String?
    var email: String?
    var password: String?
}

struct EmailLoginRequest: Decodable {
    var email: String?
    var password: String?
}

struct GoogleLoginRequest: Decodable {
    var token: String?
}

struct RefreshRequest: Decodable {
    var refreshToken: String?
}
