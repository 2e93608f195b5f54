/// Why a request through ``CurlHTTPClient`` failed. Messages never carry header values or
/// request bodies, so an error can be logged without leaking a credential.
public enum CurlError: Error, Equatable, Sendable {
    /// The request cannot be sent as given: a malformed URL or method, a scheme other than
    /// http or https, or a header with a line break in it.
    case invalidRequest(String)
    /// The server could not be reached: the connection was refused or the host name did not
    /// resolve.
    case connectFailed(String)
    /// No connection was established within the connect timeout.
    case connectTimeout
    /// The whole request took longer than its total timeout.
    case timeout
    /// The response body is larger than the limit the request allows.
    case responseTooLarge(limit: Int)
    /// Any other failure libcurl reports, with its `CURLcode` and message.
    case transport(code: Int, message: String)
    /// The client was shut down before the request could start.
    case shutdown
}
