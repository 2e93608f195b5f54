/// One-dimensional array literals: `{a,"b c",NULL}`.
enum PostgresArrayText {
    /// Byte by byte: the outbox binds its events' payloads (kilobytes each) this way, and a
    /// scalar at a time into a String cost a create a tenth of its CPU. Both escaped bytes are
    /// ASCII, so never part of a longer UTF-8 sequence.
    static func format(_ elements: [String]) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(elements.reduce(2) { $0 + $1.utf8.count + 3 })
        bytes.append(UInt8(ascii: "{"))
        for (index, element) in elements.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes.append(UInt8(ascii: "\""))
            for byte in element.utf8 {
                if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { bytes.append(UInt8(ascii: "\\")) }
                bytes.append(byte)
            }
            bytes.append(UInt8(ascii: "\""))
        }
        bytes.append(UInt8(ascii: "}"))
        return String(decoding: bytes, as: UTF8.self)
    }

    /// A cell's elements, none of them NULL.
    static func elements(of cell: PostgresCell) throws -> [String] {
        guard let elements = parse(try cell.requireBytes()) else { throw cell.failure("not an array") }
        return try elements.map { element in
            guard let element else { throw cell.failure("the array holds a NULL") }
            return element
        }
    }

    /// The elements, nil for a NULL element; nil for text that is not a one-dimensional array.
    /// An element without escapes becomes a string straight from its bytes (short ones need no
    /// allocation at all): search results carry arrays of thousands of words.
    static func parse(_ bytes: ArraySlice<UInt8>) -> [String?]? {
        guard bytes.first == UInt8(ascii: "{"), bytes.last == UInt8(ascii: "}") else { return nil }
        var elements: [String?] = []
        var index = bytes.startIndex + 1
        let end = bytes.endIndex - 1
        if index == end { return [] }
        while index <= end {
            if bytes[index] == UInt8(ascii: "\"") {
                index += 1
                let start = index
                var escaped = false
                while index < end, bytes[index] != UInt8(ascii: "\"") {
                    if bytes[index] == UInt8(ascii: "\\") {
                        escaped = true
                        index += 1
                    }
                    index += 1
                }
                guard index < end else { return nil }
                elements.append(escaped ? unescaped(bytes[start..<index]) : String(decoding: bytes[start..<index], as: UTF8.self))
                index += 1
            } else {
                let start = index
                while index < end, bytes[index] != UInt8(ascii: ",") {
                    guard bytes[index] != UInt8(ascii: "{") else { return nil }
                    index += 1
                }
                let text = String(decoding: bytes[start..<index], as: UTF8.self)
                elements.append(text == "NULL" ? nil : text)
            }
            guard index == end || bytes[index] == UInt8(ascii: ",") else { return nil }
            index += 1
        }
        return elements
    }

    /// A quoted element's text without its backslashes.
    private static func unescaped(_ bytes: ArraySlice<UInt8>) -> String {
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            if bytes[index] == UInt8(ascii: "\\") { index += 1 }
            if index < bytes.endIndex { text.append(bytes[index]) }
            index += 1
        }
        return String(decoding: text, as: UTF8.self)
    }
}
