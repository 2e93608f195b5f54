import CCurl

/// A transfer the loop thread has added to the multi handle: it collects the response as
/// libcurl delivers it and turns the outcome into a response or an error.
///
/// Only the loop thread touches it; libcurl's callbacks reach it through `Unmanaged` in
/// their userdata pointer, and the loop's table keeps it alive until the transfer ends.
final class RunningTransfer {
    let transfer: PreparedTransfer
    let continuation: CheckedContinuation<CurlHTTPClient.Response, any Error>
    private var headers: [(name: String, value: String)] = []
    private var body: [UInt8] = []
    /// Bytes of the body received, kept or not.
    private var bodyBytes = 0
    private var exceededLimit = false
    /// libcurl writes its detailed message for a failure here.
    private let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE))

    init(_ transfer: PreparedTransfer, continuation: CheckedContinuation<CurlHTTPClient.Response, any Error>) {
        self.transfer = transfer
        self.continuation = continuation
        errorBuffer.initialize(to: 0)
    }

    deinit {
        errorBuffer.deallocate()
    }

    /// Points the easy handle's callbacks at this object. It must stay alive until the handle
    /// leaves the multi handle.
    func attach() -> CURLcode {
        let handle = transfer.easy.pointer
        let userdata = Unmanaged.passUnretained(self).toOpaque()
        for code in [
            postly_curl_easy_setopt_pointer(handle, CURLOPT_ERRORBUFFER, errorBuffer),
            postly_curl_easy_setopt_pointer(handle, CURLOPT_WRITEDATA, userdata),
            postly_curl_easy_setopt_write_callback(handle) { data, size, count, userdata in
                let transfer = Unmanaged<RunningTransfer>.fromOpaque(userdata!).takeUnretainedValue()
                let length = size * count
                // Any other return value than `length` makes libcurl abort with CURLE_WRITE_ERROR.
                return transfer.receiveBody(UnsafeRawBufferPointer(start: data, count: length)) ? length : 0
            },
            postly_curl_easy_setopt_pointer(handle, CURLOPT_HEADERDATA, userdata),
            postly_curl_easy_setopt_header_callback(handle) { data, size, count, userdata in
                let transfer = Unmanaged<RunningTransfer>.fromOpaque(userdata!).takeUnretainedValue()
                let length = size * count
                transfer.receiveHeaderLine(UnsafeRawBufferPointer(start: data, count: length))
                return length
            },
        ] where code != CURLE_OK {
            return code
        }
        return CURLE_OK
    }

    /// Keeps the body up to the cap. A body that is not kept is read up to the cap too, so a
    /// short one ends and leaves its connection for the next request, and a longer one is not
    /// downloaded for nothing: the transfer ends there with the status already received.
    private func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard bytes.count <= transfer.maxResponseBytes - bodyBytes else {
            exceededLimit = true
            return false
        }
        bodyBytes += bytes.count
        if transfer.keepsBody { body.append(contentsOf: bytes) }
        return true
    }

    /// libcurl passes each header line whole, status lines of interim responses included.
    private func receiveHeaderLine(_ bytes: UnsafeRawBufferPointer) {
        var end = bytes.endIndex
        while end > bytes.startIndex, bytes[end - 1] == UInt8(ascii: "\r") || bytes[end - 1] == UInt8(ascii: "\n") { end -= 1 }
        let line = Substring(String(decoding: bytes[..<end], as: UTF8.self))
        if line.hasPrefix("HTTP/") {
            // A new response begins (after `100 Continue`): only the final one's headers count.
            headers.removeAll()
        } else if let first = line.first, first == " " || first == "\t", !headers.isEmpty {
            // An obsolete folded continuation of the previous header's value.
            headers[headers.count - 1].value += " " + line.trimmingWhitespace()
        } else if let colon = line.firstIndex(of: ":") {
            headers.append((
                name: String(line[..<colon].trimmingWhitespace()),
                value: String(line[line.index(after: colon)...].trimmingWhitespace())
            ))
        }
    }

    /// The response, or the error that ended the transfer with `code`.
    func outcome(_ code: CURLcode) -> Result<CurlHTTPClient.Response, CurlError> {
        let handle = transfer.easy.pointer
        switch code {
        case CURLE_OK, CURLE_WRITE_ERROR where exceededLimit && !transfer.keepsBody,
            CURLE_OPERATION_TIMEDOUT where bodyBytes > 0 && !transfer.keepsBody:
            // A body begun: the final response's status and headers are in, and its rest is
            // not wanted.
            var status = 0
            _ = postly_curl_easy_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
            return .success(CurlHTTPClient.Response(status: status, headers: headers, body: body))
        case CURLE_WRITE_ERROR where exceededLimit, CURLE_FILESIZE_EXCEEDED:
            return .failure(.responseTooLarge(limit: transfer.maxResponseBytes))
        case CURLE_OPERATION_TIMEDOUT:
            // libcurl reports both timeouts with one code. The connect timeout is the one that
            // fired when the request was not sent (the connection, TLS's handshake included, was
            // not made: the pre-transfer time says so whatever libcurl's version counts as the
            // connect time) and the total timeout was not yet reached.
            var connectedMicroseconds: curl_off_t = 0
            var totalMicroseconds: curl_off_t = 0
            _ = postly_curl_easy_getinfo_off_t(handle, CURLINFO_PRETRANSFER_TIME_T, &connectedMicroseconds)
            _ = postly_curl_easy_getinfo_off_t(handle, CURLINFO_TOTAL_TIME_T, &totalMicroseconds)
            let threshold = (transfer.connectTimeout + transfer.timeout) / 2
            let connectFired = connectedMicroseconds == 0 && Duration.microseconds(totalMicroseconds) < threshold
                && transfer.connectTimeout < transfer.timeout
            return .failure(connectFired ? .connectTimeout : .timeout)
        case CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY,
            CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION:
            // Nothing of the request was sent: a failed TLS handshake is a connection not made.
            return .failure(.connectFailed(message(code)))
        case CURLE_UNSUPPORTED_PROTOCOL, CURLE_URL_MALFORMAT:
            return .failure(.invalidRequest(message(code)))
        default:
            return .failure(.transport(code: Int(code.rawValue), message: message(code)))
        }
    }

    private func message(_ code: CURLcode) -> String {
        errorBuffer.pointee != 0 ? String(cString: errorBuffer) : String(cString: curl_easy_strerror(code))
    }
}

extension Substring {
    fileprivate func trimmingWhitespace() -> Substring {
        var trimmed = self
        while let first = trimmed.first, first == " " || first == "\t" { trimmed.removeFirst() }
        while let last = trimmed.last, last == " " || last == "\t" { trimmed.removeLast() }
        return trimmed
    }
}
