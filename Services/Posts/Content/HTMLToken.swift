/// One piece of HTML as `HTMLTokenizer` reads it.
enum HTMLToken: Equatable {
    /// Text with its character references decoded.
    case text(String)
    /// A start tag, its name lower-cased, attribute names lower-cased, values decoded.
    case startTag(name: String, attributes: [(name: String, value: String)], selfClosing: Bool)
    case endTag(name: String)

    static func == (lhs: HTMLToken, rhs: HTMLToken) -> Bool {
        switch (lhs, rhs) {
        case (.text(let a), .text(let b)): a == b
        case (.endTag(let a), .endTag(let b)): a == b
        case (.startTag(let a, let x, let s), .startTag(let b, let y, let t)):
            a == b && s == t && x.count == y.count && zip(x, y).allSatisfy { $0.name == $1.name && $0.value == $1.value }
        default: false
        }
    }
}
