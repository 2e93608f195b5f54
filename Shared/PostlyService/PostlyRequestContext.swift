import Foundation
import Hummingbird
import NIOCore
import PostlyModels

/// The request context of every Postly service: the request id, who is calling, and the
/// one JSON configuration for bodies.
public struct PostlyRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// Echoed from `X-Request-ID` or generated; on every response and every log line.
    public var requestId: String
    /// Set by `AuthenticationMiddleware` when the request carries a valid access token.
    public var identity: Identity?
    /// Why the request's token was not taken, if it had one: the answer where a caller is needed.
    public var tokenRefusal: APIError?
    /// The peer's IP address (behind the gateway, the gateway's), for limits per client.
    public var peerAddress: String?
    /// The connection, for responses that outlive the handler (a stream notices its client leave).
    public let channel: any Channel

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.requestId = ""
        self.identity = nil
        self.tokenRefusal = nil
        self.peerAddress = source.channel.remoteAddress?.ipAddress
        self.channel = source.channel
    }

    public var requestDecoder: JSONDecoder { Self.decoder }
    public var responseEncoder: PostlyResponseEncoder { PostlyResponseEncoder() }
    public var maxUploadSize: Int { RequestLimits.maxBodyBytes }

    static let decoder = PostlyJSON.decoder()

    /// The caller, or 401, for a route that needs one only sometimes (drafts in a list);
    /// routes that always need one are `authenticated`.
    public func requireIdentity() throws -> Identity {
        guard let identity else { throw tokenRefusal ?? APIError.unauthorized("Authentication required") }
        return identity
    }
}

public enum RequestLimits {
    /// Bodies over 1 MiB answer 413.
    public static let maxBodyBytes = 1 << 20
}
