import Foundation

/// Where cmark-gfm 0.29 (Debian's) does work, or writes output, that grows faster than the
/// document, the document is changed first so that it cannot: a post of a few kilobytes had
/// rendered to hundreds of megabytes, or taken minutes of a thread. Each bound is far past
/// what a written post holds, and needs no parse.
extension Markdown {
    /// The most bytes of reference definitions the links of one document may copy.
    static let referenceCopyLimit = 8 << 20

    /// `markdown`, or, when its reference links could copy more than `referenceCopyLimit`
    /// bytes, `markdown` with its reference definitions made text (`]:` becomes `]\:`).
    /// cmark-gfm 0.29 (Debian's) copies a definition's URL and title into each link that uses
    /// it, while parsing: 85 KB of Markdown made 250 MB of HTML, and a post's 400 KB could
    /// take gigabytes. The bound needs no parse: a link uses at most one definition per `]`,
    /// and a definition is a label opening a line (`[` after container markers at most, no
    /// unescaped `[` inside) closed by `]:`, and ends by the next blank line.
    static func boundingReferenceCopies(_ markdown: String) -> String {
        var brackets = 0
        var longestDefinition = 0
        var firstDefinition: Int?  // in the current run of non-blank lines
        var labelOpensLine = false  // the last unescaped `[`
        var lineIsBlank = true
        var lineHasText = false  // more than white space and container markers
        var escaped = false
        var previous: UInt8 = 0
        for (offset, byte) in markdown.utf8.enumerated() {
            let isEscaped = escaped
            escaped = byte == UInt8(ascii: "\\") && !isEscaped
            switch byte {
            case UInt8(ascii: "\n"):
                if lineIsBlank, let start = firstDefinition {
                    longestDefinition = max(longestDefinition, offset - start)
                    firstDefinition = nil
                }
                lineIsBlank = true
                lineHasText = false
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"):
                break
            case UInt8(ascii: ">"), UInt8(ascii: "-"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "."), UInt8(ascii: ")"),
                UInt8(ascii: "0")...UInt8(ascii: "9"):
                lineIsBlank = false
            default:
                if byte == UInt8(ascii: "["), !isEscaped { labelOpensLine = !lineHasText }
                if byte == UInt8(ascii: "]") { brackets += 1 }
                if byte == UInt8(ascii: ":"), previous == UInt8(ascii: "]"), labelOpensLine {
                    firstDefinition = firstDefinition ?? offset
                }
                lineIsBlank = false
                lineHasText = true
            }
            previous = byte
        }
        if let start = firstDefinition { longestDefinition = max(longestDefinition, markdown.utf8.count - start) }
        guard brackets * longestDefinition > referenceCopyLimit else { return markdown }
        return escaping(UInt8(ascii: ":"), after: UInt8(ascii: "]"), in: markdown)
    }

    /// The most cells the tables of one document may have, each row padded to its header's
    /// columns.
    static let tableCellLimit = 100_000

    /// At most how many cells the tables of `markdown` can have: cmark-gfm pads every row of a
    /// table to its header's width, so a header and delimiter row of 3,000 columns over 3,000
    /// one-letter lines (18 KB) made 9 million cells and 90 MB of HTML. No table has more
    /// columns than its header line has `|` and one, nor more rows than the document has
    /// lines (ended by `\n` or `\r`, as cmark ends them): a bound no way of writing a table
    /// escapes, which only a long document with a line of many `|` reaches without one.
    static func tableCells(_ markdown: String) -> Int {
        var (lines, pipes, mostPipes) = (1, 0, 0)
        var previous: UInt8 = 0
        for byte in markdown.utf8 {
            defer { previous = byte }
            switch byte {
            case UInt8(ascii: "\n") where previous == UInt8(ascii: "\r"):
                break
            case UInt8(ascii: "\n"), UInt8(ascii: "\r"):
                lines += 1
                pipes = 0
            case UInt8(ascii: "|"):
                pipes += 1
                mostPipes = max(mostPipes, pipes)
            default:
                break
            }
        }
        return (mostPipes + 1) * lines
    }

    /// The most `[` a document may have with its links and images: cmark-gfm's work on nested
    /// brackets grows with their square (`![` 25,000 times before 12,500 `[]()` took seconds).
    static let bracketLimit = 5_000

    /// `markdown`, or, past `bracketLimit` brackets, `markdown` with every `[` made text.
    static func boundingBrackets(_ markdown: String) -> String {
        guard markdown.utf8.count(where: { $0 == UInt8(ascii: "[") }) > bracketLimit else { return markdown }
        return escaping(UInt8(ascii: "["), in: markdown)
    }

    /// The deepest a line's block quotes and list items may nest.
    static let nestingLimit = 32

    /// `markdown` with the container markers that open a line escaped past `nestingLimit`, so
    /// the rest of the line is text: cmark-gfm's work on a line grows with its nesting times its
    /// inline content, and 10,000 `>` before 10,000 `a*` (30 KB) took seconds. A line's nesting
    /// is its markers, and its white space among them past one column a marker, at two columns
    /// a list level (lines indented ever deeper nested 32 levels each). A thematic break
    /// (`* * *`) is left.
    static func boundingNesting(_ markdown: String) -> String {
        let bytes = Array(markdown.utf8)
        var escapes: [Int] = []  // offsets to put a backslash before
        var start = 0
        while start < bytes.count {
            let end = bytes[start...].firstIndex { $0 == UInt8(ascii: "\n") || $0 == UInt8(ascii: "\r") } ?? bytes.count
            defer { start = end + 1 }
            if Self.isThematicBreak(bytes[start..<end]) { continue }
            var position = start
            var (column, whiteSpace, markers) = (0, 0, 0)
            scan: while position < end {
                var marker = position  // the byte escaped when this marker is past the bound
                switch bytes[position] {
                case UInt8(ascii: " "), UInt8(ascii: "\t"):
                    let width = bytes[position] == UInt8(ascii: "\t") ? 4 - column % 4 : 1
                    (column, whiteSpace, position) = (column + width, whiteSpace + width, position + 1)
                    continue scan
                case UInt8(ascii: ">"):
                    position += 1
                case let byte where [UInt8(ascii: "-"), UInt8(ascii: "*"), UInt8(ascii: "+")].contains(byte) && Self.isSpaceOrEnd(bytes, position + 1, end):
                    position += 1
                case UInt8(ascii: "0")...UInt8(ascii: "9"):
                    var digits = position
                    while digits < end, digits - position < 9, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[digits]) { digits += 1 }
                    guard digits < end, bytes[digits] == UInt8(ascii: ".") || bytes[digits] == UInt8(ascii: ")"),
                        Self.isSpaceOrEnd(bytes, digits + 1, end)
                    else { break scan }
                    marker = digits
                    column += digits - position
                    position = digits + 1
                default:
                    break scan
                }
                column += 1
                markers += 1
                if markers + max(0, whiteSpace - markers) / 2 > nestingLimit {
                    escapes.append(marker)
                    break scan
                }
            }
        }
        guard !escapes.isEmpty else { return markdown }
        var bounded: [UInt8] = []
        bounded.reserveCapacity(bytes.count + escapes.count)
        var copied = 0
        for offset in escapes {
            bounded += bytes[copied..<offset]
            bounded.append(UInt8(ascii: "\\"))
            copied = offset
        }
        bounded += bytes[copied...]
        return String(decoding: bounded, as: UTF8.self)
    }

    /// `markdown` with a backslash before each `byte` (that follows `previous`, when given) not
    /// already escaped, byte by byte: a `String` replacement compares characters, and a
    /// combining mark after the byte made it part of another character, which cmark still read
    /// as the byte. A second backslash would make an escaped byte live again (`\\[`).
    static func escaping(_ byte: UInt8, after previous: UInt8? = nil, in markdown: String) -> String {
        var escaped: [UInt8] = []
        escaped.reserveCapacity(markdown.utf8.count + markdown.utf8.count / 8)
        var last: UInt8 = 0
        var isEscaped = false  // after an odd run of backslashes
        for current in markdown.utf8 {
            if current == byte, !isEscaped, previous == nil || previous == last { escaped.append(UInt8(ascii: "\\")) }
            escaped.append(current)
            isEscaped = current == UInt8(ascii: "\\") && !isEscaped
            last = current
        }
        return String(decoding: escaped, as: UTF8.self)
    }

    /// Whether the line at `offset` ends, or a space or tab follows a list marker.
    private static func isSpaceOrEnd(_ bytes: [UInt8], _ offset: Int, _ end: Int) -> Bool {
        offset == end || bytes[offset] == UInt8(ascii: " ") || bytes[offset] == UInt8(ascii: "\t")
    }

    /// Three or more of one of `*`, `-`, `_` and nothing else but white space: `<hr />`.
    private static func isThematicBreak(_ line: ArraySlice<UInt8>) -> Bool {
        let marks = line.filter { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") }
        guard marks.count >= 3, let first = marks.first, [UInt8(ascii: "*"), UInt8(ascii: "-"), UInt8(ascii: "_")].contains(first) else { return false }
        return marks.allSatisfy { $0 == first }
    }
}
