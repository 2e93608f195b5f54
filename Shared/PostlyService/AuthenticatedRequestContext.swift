import Foundation
import Hummingbird
import NIOCore

/// The context of the routes that need a caller: made from the request's context when the
/// route is reached; without a verified access token, 401 (or the token's refusal). Routes go here
/// through `authenticated(_:)`, so the routing table shows which ones are protected.
public struct AuthenticatedRequestContext: ChildRequestContext {
    public typealias ParentContext = PostlyRequestContext

    public var coreContext: CoreRequestContextStorage
    public let requestId: String
    /// The caller.
    public let identity: Identity
    public let peerAddress: String?
    public let channel: any Channel

    public init(context: PostlyRequestContext) throws {
        let identity = try context.requireIdentity()
        self.coreContext = context.coreContext
        self.requestId = context.requestId
        self.identity = identity
        self.peerAddress = context.peerAddress
        self.channel = context.channel
    }

    public var requestDecoder: JSONDecoder { PostlyRequestContext.decoder }
    public var responseEncoder: PostlyResponseEncoder { PostlyResponseEncoder() }
    public var maxUploadSize: Int { RequestLimits.maxBodyBytes }
}

extension RouterMethods where Context == PostlyRequestContext {
    /// A group of routes that need a caller: the token was verified by the authentication
    /// middleware; here a request without one ends with 401 before any handler runs.
    public func authenticated(_ path: RouterPath = "") -> RouterGroup<AuthenticatedRequestContext> {
        group(path, context: AuthenticatedRequestContext.self)
    }
}
