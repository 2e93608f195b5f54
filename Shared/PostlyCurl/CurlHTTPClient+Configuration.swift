extension CurlHTTPClient {
    /// Limits every request gets unless it overrides them.
    public struct Configuration: Sendable {
        /// How long establishing the connection (TCP and TLS) may take.
        public var connectTimeout: Duration
        /// How long the whole request may take, connecting included.
        public var timeout: Duration
        /// The largest response body accepted; a larger one fails with
        /// ``CurlError/responseTooLarge(limit:)``.
        public var maxResponseBytes: Int
        /// Sent as `User-Agent` unless a request sets its own.
        public var userAgent: String

        public init(
            connectTimeout: Duration = .seconds(2),
            timeout: Duration = .seconds(10),
            maxResponseBytes: Int = 8 * 1024 * 1024,
            userAgent: String = "Postly"
        ) {
            self.connectTimeout = connectTimeout
            self.timeout = timeout
            self.maxResponseBytes = maxResponseBytes
            self.userAgent = userAgent
        }
    }
}
