/// A forgiving HTML tokenizer for the sanitizer: comments, doctypes and processing
/// instructions vanish; a tag left open at the end of the input vanishes with the rest of
/// the input (it could hide anything); a `<` that starts no tag is text.
struct HTMLTokenizer {
    static func tokens(_ html: String) -> [HTMLToken] {
        let input = Array(html.unicodeScalars)
        var tokens: [HTMLToken] = []
        var text = String.UnicodeScalarView()
        var index = 0

        func flushText() {
            if !text.isEmpty {
                tokens.append(.text(CharacterReferences.decode(String(text))))
                text = String.UnicodeScalarView()
            }
        }
        func isLetter(_ scalar: Unicode.Scalar) -> Bool {
            scalar.isASCII && scalar.properties.isAlphabetic
        }
        func isSpace(_ scalar: Unicode.Scalar) -> Bool {
            scalar == " " || scalar == "\t" || scalar == "\n" || scalar == "\r" || scalar == "\u{0C}"
        }
        /// The index just past the next `>` from `start`, or nil.
        func pastClosingBracket(from start: Int) -> Int? {
            var i = start
            while i < input.count {
                if input[i] == ">" { return i + 1 }
                i += 1
            }
            return nil
        }

        while index < input.count {
            let scalar = input[index]
            guard scalar == "<", index + 1 < input.count else {
                text.append(scalar)
                index += 1
                continue
            }
            let next = input[index + 1]
            if next == "!" || next == "?" {
                flushText()
                let isComment = index + 3 < input.count && input[index + 2] == "-" && input[index + 3] == "-"
                if isComment {
                    var i = index + 4
                    while i + 2 < input.count, !(input[i] == "-" && input[i + 1] == "-" && input[i + 2] == ">") { i += 1 }
                    index = i + 2 < input.count ? i + 3 : input.count
                } else {
                    index = pastClosingBracket(from: index) ?? input.count
                }
            } else if next == "/" {
                flushText()
                var i = index + 2
                var name = ""
                while i < input.count, !isSpace(input[i]), input[i] != ">", input[i] != "/" {
                    name.unicodeScalars.append(input[i])
                    i += 1
                }
                guard let end = pastClosingBracket(from: i) else {
                    index = input.count
                    break
                }
                if !name.isEmpty { tokens.append(.endTag(name: name.lowercased())) }
                index = end
            } else if isLetter(next) {
                flushText()
                var i = index + 1
                var name = ""
                while i < input.count, !isSpace(input[i]), input[i] != ">", input[i] != "/" {
                    name.unicodeScalars.append(input[i])
                    i += 1
                }
                var attributes: [(name: String, value: String)] = []
                var selfClosing = false
                var closed = false
                while i < input.count {
                    let c = input[i]
                    if isSpace(c) { i += 1; continue }
                    if c == ">" { closed = true; i += 1; break }
                    if c == "/" { selfClosing = true; i += 1; continue }
                    selfClosing = false
                    var attributeName = ""
                    while i < input.count, !isSpace(input[i]), input[i] != ">", input[i] != "/" || attributeName.isEmpty, input[i] != "=" || attributeName.isEmpty {
                        attributeName.unicodeScalars.append(input[i])
                        i += 1
                    }
                    while i < input.count, isSpace(input[i]) { i += 1 }
                    var value = ""
                    if i < input.count, input[i] == "=" {
                        i += 1
                        while i < input.count, isSpace(input[i]) { i += 1 }
                        if i < input.count, input[i] == "\"" || input[i] == "'" {
                            let quote = input[i]
                            i += 1
                            while i < input.count, input[i] != quote {
                                value.unicodeScalars.append(input[i])
                                i += 1
                            }
                            i += 1
                        } else {
                            while i < input.count, !isSpace(input[i]), input[i] != ">" {
                                value.unicodeScalars.append(input[i])
                                i += 1
                            }
                        }
                    }
                    attributes.append((attributeName.lowercased(), CharacterReferences.decode(value)))
                }
                guard closed else {
                    index = input.count
                    break
                }
                tokens.append(.startTag(name: name.lowercased(), attributes: attributes, selfClosing: selfClosing))
                index = i
            } else {
                text.append(scalar)
                index += 1
            }
        }
        flushText()
        return tokens
    }
}
