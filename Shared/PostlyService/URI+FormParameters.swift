import Foundation
import Hummingbird
import HummingbirdCore

extension URI {
    /// The query's parameters decoded as a form encodes them: `+` is a space, then
    /// percent-escapes (`uri.queryParameters` keeps a `+`). For every parameter that carries
    /// text a person typed: the app sends a space as `+`.
    public var formParameters: Parameters {
        guard let query, !query.isEmpty else { return Parameters() }
        return Parameters(query.split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (key: Self.formDecoded(parts[0]), value: parts.count > 1 ? Self.formDecoded(parts[1]) : "")
        })
    }

    /// `+` as a space, then the escapes; a malformed escape is left as it came.
    private static func formDecoded(_ text: Substring) -> Substring {
        let spaced = text.replacingOccurrences(of: "+", with: " ")
        return Substring(spaced.removingPercentEncoding ?? spaced)
    }
}
