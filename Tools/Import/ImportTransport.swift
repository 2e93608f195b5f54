import PostlyCurl

/// Sends a batch to a service: `POST url` with the import token, answering status and body.
public protocol ImportTransport: Sendable {
    func post(_ url: String, token: String, body: [UInt8]) async throws -> (status: Int, body: [UInt8])
}

/// The transport of a real run, over the project's libcurl client.
public struct CurlImportTransport: ImportTransport {
    let client: CurlHTTPClient

    public init(client: CurlHTTPClient) { self.client = client }

    public func post(_ url: String, token: String, body: [UInt8]) async throws -> (status: Int, body: [UInt8]) {
        var request = CurlHTTPClient.Request.post(
            url, headers: [("Authorization", "Bearer \(token)"), ("Content-Type", "application/json")], body: body)
        // 500 posts rendered and written in one transaction take seconds on a busy machine.
        request.timeout = .seconds(120)
        let response = try await client.execute(request)
        return (response.status, response.body)
    }
}
