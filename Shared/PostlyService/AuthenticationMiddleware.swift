import Hummingbird

/// Sets `context.identity` from `Authorization: Bearer <token>`. A request without the
/// header, or with a token that does not verify (expired, revoked, forged, or its keys out
/// of reach), passes as anonymous: a public read answers as to anyone, as the earlier
/// backend did for its clients, which send their token everywhere and cannot refresh it.
/// Where a caller is needed (`authenticated`, `requireIdentity`) the token's refusal is the
/// answer: 401 naming why, or 503 when the keys cannot be fetched.
public struct AuthenticationMiddleware: RouterMiddleware {
    public typealias Context = PostlyRequestContext

    let verifier: AccessTokenVerifier

    public init(verifier: AccessTokenVerifier) {
        self.verifier = verifier
    }

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        // The internal routes' `Authorization` is the import token, checked by `ImportGate`.
        guard let authorization = request.headers[.authorization], !ImportGate.isInternal(request.uri.path) else {
            return try await next(request, context)
        }
        let scheme = "bearer "
        var context = context
        do {
            guard authorization.count > scheme.count, authorization.prefix(scheme.count).lowercased() == scheme else {
                throw APIError.unauthorized("Authorization must be a Bearer token")
            }
            let identity = try await verifier.verify(String(authorization.dropFirst(scheme.count)))
            context.identity = identity
            context.logger[metadataKey: "userId"] = .string(identity.userId)
        } catch let refusal as APIError {
            context.tokenRefusal = refusal
        }
        return try await next(request, context)
    }
}
