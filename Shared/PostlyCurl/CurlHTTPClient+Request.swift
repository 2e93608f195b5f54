extension CurlHTTPClient {
    /// One HTTP request. Redirects are not followed: a 3xx response is returned as it is.
    public struct Request: Sendable {
        /// `GET`, `POST`, `PUT`, `DELETE`, ... sent as given.
        public var method: String
        /// An absolute `http` or `https` URL.
        public var url: String
        /// Sent in this order; a name may repeat.
        public var headers: [(name: String, value: String)]
        /// The request body. `POST`, `PUT` and `PATCH` without one send an empty body.
        public var body: [UInt8]?
        /// Overrides ``Configuration/timeout`` for this request.
        public var timeout: Duration?
        /// Overrides ``Configuration/connectTimeout`` for this request.
        public var connectTimeout: Duration?
        /// Overrides ``Configuration/maxResponseBytes`` for this request.
        public var maxResponseBytes: Int?
        /// Whether the response's body is kept. A caller that reads only the status sets it
        /// false: the body is read and dropped up to ``maxResponseBytes``, and the transfer
        /// ends there or at the timeout, so a long, endless or slow error page never turns the
        /// answer into ``CurlError/responseTooLarge(limit:)`` or a timeout once its body has
        /// begun, and its status is kept.
        public var keepsBody = true
        /// `HOST:PORT:ADDRESS` entries (curl's `CURLOPT_RESOLVE`): the request connects to
        /// ADDRESS for HOST:PORT without asking DNS, so a caller that checked where a name
        /// leads can pin the request there. The entry then stays in the client's DNS cache as
        /// a name looked up does (a minute), not for the process's life: every host ever
        /// pinned stayed in memory.
        public var resolve: [String] = []

        public init(
            method: String = "GET",
            url: String,
            headers: [(name: String, value: String)] = [],
            body: [UInt8]? = nil,
            timeout: Duration? = nil,
            connectTimeout: Duration? = nil,
            maxResponseBytes: Int? = nil
        ) {
            self.method = method
            self.url = url
            self.headers = headers
            self.body = body
            self.timeout = timeout
            self.connectTimeout = connectTimeout
            self.maxResponseBytes = maxResponseBytes
        }

        public static func get(_ url: String, headers: [(name: String, value: String)] = []) -> Request {
            Request(method: "GET", url: url, headers: headers)
        }

        public static func post(_ url: String, headers: [(name: String, value: String)] = [], body: [UInt8]) -> Request {
            Request(method: "POST", url: url, headers: headers, body: body)
        }
    }
}
