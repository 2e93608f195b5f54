import Hummingbird

/// Sets `context.identity` from `Authorization: Bearer <token>`. A request without the
/// header passes as anonymous (routes that need a caller are `authenticated`); one
/// with a token that does not verify answers 401, whatever the route.
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
        guard authorization.count > scheme.count, authorization.prefix(scheme.count).lowercased() == scheme else {
            throw APIError.unauthorized("Authorization must be a Bearer token")
        }
        var context = context
        context.identity = try await verifier.verify(String(authorization.dropFirst(scheme.count)))
        context.logger[metadataKey: "userId"] = .string(context.identity?.userId ?? "")
        return try await next(request, context)
    }
}
