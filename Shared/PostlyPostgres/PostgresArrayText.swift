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

    /// The elements, nil for a NULL element; nil for text that is not a one-dimensional array.
    static func parse(_ bytes: ArraySlice<UInt8>) -> [String?]? {
        guard bytes.first == UInt8(ascii: "{"), bytes.last == UInt8(ascii: "}") else { return nil }
        var elements: [String?] = []
        var index = bytes.startIndex + 1
        let end = bytes.endIndex - 1
        if index == end { return [] }
        while index <= end {
            var element: [UInt8] = []
            var quoted = false
            if bytes[index] == UInt8(ascii: "\"") {
                quoted = true
                index += 1
                while index < end, bytes[index] != UInt8(ascii: "\"") {
                    if bytes[index] == UInt8(ascii: "\\") { index += 1 }
                    guard index < end else { return nil }
                    element.append(bytes[index])
                    index += 1
                }
                guard index < end else { return nil }
                index += 1
            } else {
                while index < end, bytes[index] != UInt8(ascii: ",") {
                    guard bytes[index] != UInt8(ascii: "{") else { return nil }
                    element.append(bytes[index])
                    index += 1
                }
            }
            let text = String(decoding: element, as: UTF8.self)
            elements.append(!quoted && text == "NULL" ? nil : text)
            guard index == end || bytes[index] == UInt8(ascii: ",") else { return nil }
            index += 1
        }
        return elements
    }
}
