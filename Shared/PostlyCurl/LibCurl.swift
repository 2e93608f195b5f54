import CCurl

/// Process-wide libcurl state.
enum LibCurl {
    /// `curl_global_init`, run once, before the first handle is created.
    static let initialized: Bool = postly_curl_global_init() == CURLE_OK
}

extension Duration {
    /// The duration in whole milliseconds, at least 1: libcurl reads 0 as "no timeout".
    var curlMilliseconds: Int {
        let (seconds, attoseconds) = components
        let milliseconds = seconds.multipliedReportingOverflow(by: 1000)
        guard !milliseconds.overflow else { return Int.max }
        return max(1, Int(milliseconds.partialValue) + Int(attoseconds / 1_000_000_000_000_000))
    }
}
