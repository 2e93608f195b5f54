/// One-dimensional array literals: `{a,"b c",NULL}`.
enum PostgresArrayText {
    static func format(_ elements: [String]) -> String {
        var text = "{"
        for (index, element) in elements.enumerated() {
            if index > 0 { text += "," }
            text += "\""
            for character in element.unicodeScalars {
                if character == "\"" || character == "\\" { text += "\\" }
                text.unicodeScalars.append(character)
            }
            text += "\""
        }
        return text + "}"
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
