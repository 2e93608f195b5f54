extension CurlHTTPClient {
    /// The final response of a request (interim `100 Continue` responses are dropped).
    public struct Response: Sendable {
        public var status: Int
        /// In the order the server sent them, repeated names included.
        public var headers: [(name: String, value: String)]
        public var body: [UInt8]

        public init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
            self.status = status
            self.headers = headers
            self.body = body
        }

        /// The first value of the header `name`, compared case-insensitively.
        public func header(_ name: String) -> String? {
            headers.first { $0.name.lowercased() == name.lowercased() }?.value
        }

        /// Every value of the header `name` in order, for headers that repeat (`Set-Cookie`).
        public func headers(named name: String) -> [String] {
            headers.filter { $0.name.lowercased() == name.lowercased() }.map(\.value)
        }
    }
}
