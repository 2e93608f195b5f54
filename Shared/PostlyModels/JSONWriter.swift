import Foundation

/// A value that writes its own JSON. `PostlyJSON.encode` uses it instead of `JSONEncoder`
/// for the objects every hot route answers (posts, comments, pages): the same bytes, written
/// straight into one buffer (tests hold it byte for byte to `PostlyJSON.encoder()`).
/// Keys are written in sorted order, as the encoder's `.sortedKeys` writes them.
public protocol JSONWritable {
    func write(to json: inout JSONWriter)
}

/// Appends JSON to a byte buffer: objects with `field` calls in key order, arrays, and the
/// scalar kinds the models use. Strings are escaped as `JSONEncoder` escapes them (`"`, `\`,
/// control characters; `/` and non-ASCII left as they are).
public struct JSONWriter {
    public private(set) var bytes: [UInt8]
    /// Whether the next value or key follows another in the same object or array.
    private var needsComma = false

    public init(capacity: Int = 1024) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    public mutating func object(_ fields: (inout JSONWriter) -> Void) {
        separate()
        bytes.append(UInt8(ascii: "{"))
        needsComma = false
        fields(&self)
        bytes.append(UInt8(ascii: "}"))
        needsComma = true
    }

    public mutating func array(_ items: some Sequence<some JSONWritable>) {
        separate()
        bytes.append(UInt8(ascii: "["))
        needsComma = false
        for item in items { item.write(to: &self) }
        bytes.append(UInt8(ascii: "]"))
        needsComma = true
    }

    // MARK: - Fields of an object

    /// A string, or `null` for nil.
    public mutating func field(_ key: StaticString, _ value: String?) {
        self.key(key)
        if let value { string(value) } else { null() }
    }

    /// Strings written as one string, each preceded by `separator` (so `[]` is `""`), or `null`
    /// for nil: a list of many strings in one JSON value, which is parsed far faster.
    public mutating func field(_ key: StaticString, eachAfter separator: String, _ parts: [String]?) {
        self.key(key)
        guard let parts else { return null() }
        bytes.append(UInt8(ascii: "\""))
        for part in parts {
            appendContents(of: separator)
            appendContents(of: part)
        }
        bytes.append(UInt8(ascii: "\""))
        needsComma = true
    }

    public mutating func field(_ key: StaticString, _ value: Int) {
        self.key(key)
        bytes.append(contentsOf: String(value).utf8)
        needsComma = true
    }

    public mutating func field(_ key: StaticString, _ value: Bool) {
        self.key(key)
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
        needsComma = true
    }

    /// A timestamp as the contract writes it, or `null` for nil.
    public mutating func field(_ key: StaticString, _ value: Date?) {
        self.key(key)
        if let value { timestamp(value) } else { null() }
    }

    public mutating func field(_ key: StaticString, _ value: some JSONWritable) {
        self.key(key)
        value.write(to: &self)
    }

    // MARK: - Values: each ends with `needsComma` set, for whatever follows it

    private mutating func key(_ key: StaticString) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        key.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: ":")])
        // The value follows the colon directly.
        needsComma = false
    }

    private mutating func separate() {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
        needsComma = true
    }

    private mutating func null() {
        bytes.append(contentsOf: "null".utf8)
        needsComma = true
    }

    private mutating func timestamp(_ date: Date) {
        bytes.append(UInt8(ascii: "\""))
        Timestamp.write(date, into: &bytes)
        bytes.append(UInt8(ascii: "\""))
        needsComma = true
    }

    private mutating func string(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        appendContents(of: value)
        bytes.append(UInt8(ascii: "\""))
        needsComma = true
    }

    /// A string's bytes, escaped, without its quotes. Texts are long (a post and its HTML) and
    /// rarely need an escape, so they are scanned eight bytes at a time.
    private mutating func appendContents(of value: String) {
        var value = value
        value.withUTF8 { utf8 in
            guard let base = utf8.baseAddress else { return }
            var start = 0
            var index = 0
            while index < utf8.count {
                while index + 8 <= utf8.count, !Self.anyEscaped(UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self)) {
                    index += 8
                }
                guard index < utf8.count else { break }
                let byte = base[index]
                if Self.isEscaped(byte) {
                    bytes.append(contentsOf: UnsafeBufferPointer(start: base + start, count: index - start))
                    start = index + 1
                    Self.appendEscaped(byte, to: &bytes)
                }
                index += 1
            }
            bytes.append(contentsOf: UnsafeBufferPointer(start: base + start, count: utf8.count - start))
        }
    }

    /// Whether any of eight bytes `isEscaped`: the exact tests for a byte below a bound and for
    /// a zero byte, applied to each byte at once (Hacker's Delight 6-1; Anderson's bit hacks).
    @inline(__always) static func anyEscaped(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        func anyBelow(_ x: UInt64, _ bound: UInt64) -> Bool { (x &- ones &* bound) & ~x & highs != 0 }
        return anyBelow(word, 0x20) || anyBelow(word ^ (ones &* 0x22), 1) || anyBelow(word ^ (ones &* 0x5C), 1)
    }

    /// Whether a byte of a string's UTF-8 is written escaped: a quote, a backslash, a control character.
    @inlinable public static func isEscaped(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }

    /// How many bytes a byte of a string's UTF-8 takes written: itself, or its escape (two
    /// bytes, or six for a control character without a short form).
    @inlinable public static func writtenLength(_ byte: UInt8) -> Int {
        guard isEscaped(byte) else { return 1 }
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), 0x08, 0x09, 0x0A, 0x0C, 0x0D: return 2
        default: return 6
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// Appends the escape of a byte `isEscaped` names.
    public static func appendEscaped(_ byte: UInt8, to bytes: inout [UInt8]) {
        switch byte {
        case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
        case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
        case 0x08: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "b")])
        case 0x09: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
        case 0x0A: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
        case 0x0C: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "f")])
        case 0x0D: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
        default:
            bytes.append(contentsOf: "\\u00".utf8)
            bytes.append(hexDigits[Int(byte >> 4)])
            bytes.append(hexDigits[Int(byte & 0x0F)])
        }
    }
}

extension Array: JSONWritable where Element: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.array(self)
    }
}
