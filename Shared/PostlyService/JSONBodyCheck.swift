import Foundation

/// What Foundation's `JSONDecoder` lets through and a request body must not have: bytes that
/// are not UTF-8, a top-level value that is not an object, a comma before `}` or `]` (RFC
/// 8259 has none there), a key twice in one object (the decoder would silently keep one),
/// and nesting deeper than `maxDepth`. Other syntax errors are left to the decoder, which
/// rejects them (trailing data included).
enum JSONBodyCheck {
    static let maxDepth = 64

    /// Why `bytes` is not an acceptable body, or `nil`.
    static func problem(in bytes: [UInt8]) -> String? {
        guard String(validating: bytes, as: UTF8.self) != nil else { return "The request body is not valid UTF-8" }
        guard bytes.first(where: { !isWhitespace($0) }) == UInt8(ascii: "{") else { return "The request body must be a JSON object" }

        struct Container {
            var keys: Set<String>?  // nil for an array
            var expectsKey = true
        }
        var open: [Container] = []
        // The last byte outside strings and whitespace (a string counts as its opening quote).
        var previous: UInt8 = 0
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                open.append(Container(keys: bytes[index] == UInt8(ascii: "{") ? [] : nil))
                if open.count > maxDepth { return "The request body nests deeper than \(maxDepth) levels" }
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                if previous == UInt8(ascii: ",") { return "The request body has a trailing comma before '\(Character(Unicode.Scalar(byte)))'" }
                _ = open.popLast()
            case UInt8(ascii: ","):
                if !open.isEmpty { open[open.count - 1].expectsKey = true }
            case UInt8(ascii: "\""):
                let start = index
                index += 1
                while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
                    index += bytes[index] == UInt8(ascii: "\\") ? 2 : 1
                }
                guard index < bytes.count, let last = open.indices.last, open[last].keys != nil, open[last].expectsKey else { break }
                open[last].expectsKey = false
                guard let key = try? JSONDecoder().decode(String.self, from: Data(bytes[start...index])) else { break }
                if open[last].keys?.insert(key).inserted == false { return "The request body repeats the key '\(key)'" }
            default:
                break
            }
            if !isWhitespace(byte) { previous = byte }
            index += 1
        }
        return nil
    }

    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }
}
