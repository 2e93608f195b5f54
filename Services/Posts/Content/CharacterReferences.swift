/// HTML character references (`&amp;`, `&#60;`, `&#x3C;`, `&colon;`): decoded before a URL's
/// scheme is judged, so `jav&#x61;script:` is seen for what it is; and escaping for output.
enum CharacterReferences {
    private static let named: [String: String] = [
        "amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'", "nbsp": "\u{A0}", "colon": ":",
        "tab": "\t", "newline": "\n", "sol": "/", "lpar": "(", "rpar": ")", "period": ".", "comma": ",",
        "semi": ";", "equals": "=", "num": "#", "excl": "!", "quest": "?", "percnt": "%", "hellip": "…",
        "mdash": "—", "ndash": "–", "lsquo": "‘", "rsquo": "’", "ldquo": "“", "rdquo": "”", "copy": "©",
    ]

    static func decode(_ text: String) -> String {
        guard text.contains("&") else { return text }
        let scalars = Array(text.unicodeScalars)
        var output = String.UnicodeScalarView()
        var i = 0
        while i < scalars.count {
            guard scalars[i] == "&" else {
                output.append(scalars[i])
                i += 1
                continue
            }
            // A reference is at most 32 characters; the `;` is optional for numeric ones.
            var j = i + 1
            var body = ""
            while j < scalars.count, j - i <= 32, scalars[j] != ";", scalars[j] != "&",
                  scalars[j].properties.isAlphabetic || ("0"..."9").contains(scalars[j]) || scalars[j] == "#" {
                body.unicodeScalars.append(scalars[j])
                j += 1
            }
            let terminated = j < scalars.count && scalars[j] == ";"
            var decoded: String?
            if body.hasPrefix("#x") || body.hasPrefix("#X") {
                decoded = UInt32(body.dropFirst(2), radix: 16).map(scalarText)
            } else if body.hasPrefix("#") {
                decoded = UInt32(body.dropFirst(), radix: 10).map(scalarText)
            } else if terminated {
                decoded = named[body]
            }
            if let decoded, !body.isEmpty {
                output.append(contentsOf: decoded.unicodeScalars)
                i = terminated ? j + 1 : j
            } else {
                output.append("&")
                i += 1
            }
        }
        return String(output)
    }

    private static func scalarText(_ value: UInt32) -> String {
        guard value != 0, let scalar = Unicode.Scalar(value) else { return "\u{FFFD}" }
        return String(Character(scalar))
    }

    /// Text safe inside an element and inside a double- or single-quoted attribute value.
    static func escape(_ text: String) -> String {
        var output = ""
        output.reserveCapacity(text.utf8.count)
        for character in text.unicodeScalars {
            switch character {
            case "&": output += "&amp;"
            case "<": output += "&lt;"
            case ">": output += "&gt;"
            case "\"": output += "&quot;"
            case "'": output += "&#39;"
            default: output.unicodeScalars.append(character)
            }
        }
        return output
    }
}
