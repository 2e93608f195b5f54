import CCurl
import Synchronization

/// Identifies one transfer between the caller, its cancellation handler and the loop thread.
struct TransferID: Hashable, Sendable {
    private static let counter = Atomic<UInt64>(0)
    let value: UInt64

    init() {
        value = Self.counter.wrappingAdd(1, ordering: .relaxed).newValue
    }
}

/// A curl easy handle and the lists it points to (headers, pinned addresses).
///
/// Owned by one party at a time, which alone may touch it: the task preparing the request
/// until it is submitted, then the loop thread; whoever owns it last calls ``cleanup()``.
struct EasyHandle: @unchecked Sendable {
    let pointer: UnsafeMutableRawPointer
    let headerList: UnsafeMutablePointer<curl_slist>?
    let resolveList: UnsafeMutablePointer<curl_slist>?

    func cleanup() {
        curl_easy_cleanup(pointer)
        curl_slist_free_all(headerList)
        curl_slist_free_all(resolveList)
    }
}

/// A request turned into a configured easy handle, ready for the loop thread to start.
struct PreparedTransfer: Sendable {
    let id = TransferID()
    let easy: EasyHandle
    let maxResponseBytes: Int
    let keepsBody: Bool
    let connectTimeout: Duration
    let timeout: Duration
    /// Method and URL without credentials or query, for logs.
    let summary: String

    init(_ request: CurlHTTPClient.Request, configuration: CurlHTTPClient.Configuration) throws(CurlError) {
        try request.validate()
        maxResponseBytes = request.maxResponseBytes ?? configuration.maxResponseBytes
        keepsBody = request.keepsBody
        connectTimeout = request.connectTimeout ?? configuration.connectTimeout
        timeout = request.timeout ?? configuration.timeout
        summary = "\(request.method) \(redacted(url: request.url))"
        guard maxResponseBytes >= 0 else { throw .invalidRequest("maxResponseBytes is negative") }
        guard connectTimeout > .zero, timeout > .zero else { throw .invalidRequest("a timeout is not positive") }
        guard LibCurl.initialized else { throw .transport(code: -1, message: "curl_global_init failed") }

        let headerList = try slist(request.headerLines(userAgent: configuration.userAgent))
        let resolveList: UnsafeMutablePointer<curl_slist>?
        do {
            // `+`: an entry that times out in curl's DNS cache (curl 7.75 and later).
            resolveList = try slist(request.resolve.map { "+" + $0 })
        } catch {
            curl_slist_free_all(headerList)
            throw error
        }
        guard let pointer = curl_easy_init() else {
            curl_slist_free_all(headerList)
            curl_slist_free_all(resolveList)
            throw .transport(code: Int(CURLE_OUT_OF_MEMORY.rawValue), message: "curl_easy_init failed")
        }
        easy = EasyHandle(pointer: pointer, headerList: headerList, resolveList: resolveList)
        do {
            try configure(request, userAgent: configuration.userAgent)
        } catch {
            easy.cleanup()
            throw error
        }
    }

    private func configure(_ request: CurlHTTPClient.Request, userAgent: String) throws(CurlError) {
        let handle = easy.pointer
        func check(_ code: CURLcode, _ option: String) throws(CurlError) {
            guard code == CURLE_OK else {
                throw .invalidRequest("\(option): \(String(cString: curl_easy_strerror(code)))")
            }
        }
        try check(postly_curl_easy_setopt_long(handle, CURLOPT_NOSIGNAL, 1), "NOSIGNAL")
        // A transfer that times out while its name is looked up leaves the lookup's thread to
        // finish alone: otherwise libcurl waits for it (as long as a name server that does not
        // answer takes), and every other transfer of the loop waits too.
        try check(postly_curl_easy_setopt_long(handle, CURLOPT_QUICK_EXIT, 1), "QUICK_EXIT")
        try check(postly_curl_easy_setopt_string(handle, CURLOPT_URL, request.url), "URL")
        try check(postly_curl_easy_setopt_string(handle, CURLOPT_PROTOCOLS_STR, "http,https"), "PROTOCOLS_STR")
        try check(postly_curl_easy_setopt_string(handle, CURLOPT_REDIR_PROTOCOLS_STR, "http,https"), "REDIR_PROTOCOLS_STR")
        try check(postly_curl_easy_setopt_long(handle, CURLOPT_FOLLOWLOCATION, 0), "FOLLOWLOCATION")
        try check(postly_curl_easy_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, connectTimeout.curlMilliseconds), "CONNECTTIMEOUT_MS")
        try check(postly_curl_easy_setopt_long(handle, CURLOPT_TIMEOUT_MS, timeout.curlMilliseconds), "TIMEOUT_MS")
        try check(postly_curl_easy_setopt_string(handle, CURLOPT_USERAGENT, userAgent), "USERAGENT")
        try check(postly_curl_easy_setopt_slist(handle, CURLOPT_HTTPHEADER, easy.headerList), "HTTPHEADER")
        if easy.resolveList != nil {
            try check(postly_curl_easy_setopt_slist(handle, CURLOPT_RESOLVE, easy.resolveList), "RESOLVE")
        }

        let method = request.method
        let sendsBody = request.body != nil || ["POST", "PUT", "PATCH"].contains(method)
        if sendsBody {
            let body = request.body ?? []
            try check(postly_curl_easy_setopt_long(handle, CURLOPT_POST, 1), "POST")
            try check(postly_curl_easy_setopt_off_t(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count)), "POSTFIELDSIZE_LARGE")
            // COPYPOSTFIELDS copies the bytes during the call, so the pointer need not outlive it.
            // It must not be null even for an empty body: null means "read the body from a callback".
            let code = body.withUnsafeBytes { bytes in
                if let bytes = bytes.baseAddress {
                    postly_curl_easy_setopt_pointer(handle, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: bytes))
                } else {
                    postly_curl_easy_setopt_string(handle, CURLOPT_COPYPOSTFIELDS, "")
                }
            }
            try check(code, "COPYPOSTFIELDS")
            if method != "POST" {
                try check(postly_curl_easy_setopt_string(handle, CURLOPT_CUSTOMREQUEST, method), "CUSTOMREQUEST")
            }
        } else if method == "GET" {
            try check(postly_curl_easy_setopt_long(handle, CURLOPT_HTTPGET, 1), "HTTPGET")
        } else if method == "HEAD" {
            try check(postly_curl_easy_setopt_long(handle, CURLOPT_NOBODY, 1), "NOBODY")
        } else {
            try check(postly_curl_easy_setopt_string(handle, CURLOPT_CUSTOMREQUEST, method), "CUSTOMREQUEST")
        }
        if method != "HEAD", keepsBody {
            // Refuses a declared Content-Length over the cap before any byte of the body arrives;
            // the write callback enforces the cap on bodies of unknown length.
            try check(postly_curl_easy_setopt_off_t(handle, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(maxResponseBytes)), "MAXFILESIZE_LARGE")
        }
    }
}

/// `lines` as a curl list (nil when empty), freed by the caller.
private func slist(_ lines: [String]) throws(CurlError) -> UnsafeMutablePointer<curl_slist>? {
    var list: UnsafeMutablePointer<curl_slist>?
    for line in lines {
        guard let appended = curl_slist_append(list, line) else {
            curl_slist_free_all(list)
            throw .transport(code: Int(CURLE_OUT_OF_MEMORY.rawValue), message: "curl_slist_append failed")
        }
        list = appended
    }
    return list
}

extension CurlHTTPClient.Request {
    /// Rejects what libcurl would send wrongly or what would smuggle a header.
    /// Messages name the header, never its value.
    func validate() throws(CurlError) {
        guard !method.isEmpty, method.utf8.allSatisfy(isTokenCharacter) else {
            throw .invalidRequest("the method is not an HTTP token")
        }
        guard !url.isEmpty, !url.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) else {
            throw .invalidRequest("the URL is empty or contains spaces or control characters")
        }
        guard !resolve.contains(where: { $0.utf8.contains { $0 <= 0x20 || $0 == 0x7F } }) else {
            throw .invalidRequest("a resolve entry contains spaces or control characters")
        }
        for header in headers {
            guard !header.name.isEmpty, header.name.utf8.allSatisfy(isTokenCharacter) else {
                throw .invalidRequest("a header name is not an HTTP token")
            }
            guard !header.value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }) else {
                throw .invalidRequest("the value of header \(header.name) contains a line break or NUL")
            }
        }
    }

    /// The lines for CURLOPT_HTTPHEADER, including the ones that switch libcurl's defaults off.
    func headerLines(userAgent: String) -> [String] {
        var lines = headers.map { header in
            // "Name:" would remove the header; "Name;" sends it with an empty value.
            header.value.isEmpty ? "\(header.name);" : "\(header.name): \(header.value)"
        }
        let names = Set(headers.map { $0.name.lowercased() })
        // No `Expect: 100-continue` round trip before large bodies.
        if !names.contains("expect") { lines.append("Expect:") }
        // libcurl would otherwise label every body as a form.
        if !names.contains("content-type") { lines.append("Content-Type:") }
        return lines
    }
}

/// tchar of RFC 9110.
private func isTokenCharacter(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
        return true
    default:
        return "!#$%&'*+-.^_`|~".utf8.contains(byte)
    }
}

/// The URL without user info, query and fragment, which may hold credentials.
func redacted(url: String) -> String {
    var rest = Substring(url)
    var scheme = ""
    if let range = rest.range(of: "://") {
        scheme = String(rest[..<range.upperBound])
        rest = rest[range.upperBound...]
    }
    if let end = rest.firstIndex(where: { $0 == "?" || $0 == "#" }) {
        rest = rest[..<end]
    }
    let authorityEnd = rest.firstIndex(of: "/") ?? rest.endIndex
    if let at = rest[..<authorityEnd].lastIndex(of: "@") {
        rest = rest[rest.index(after: at)...]
    }
    return scheme + rest
}
