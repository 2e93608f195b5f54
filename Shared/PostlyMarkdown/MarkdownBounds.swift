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
        return markdown.replacingOccurrences(of: "]:", with: "]\\:")
    }

    /// The most cells the tables of one document may have, each row padded to its header's
    /// columns.
    static let tableCellLimit = 100_000

    /// How many cells the tables of `markdown` have, or a few more: cmark-gfm pads every row of a
    /// table to its header's width, so a header and delimiter row of 3,000 columns over 3,000
    /// one-letter lines (18 KB) made 9 million cells and 90 MB of HTML. A delimiter row is a
    /// line of `|`, `-`, `:`, white space and container markers with a `|` and a `-`, of one
    /// column more than its `|` (a leading or trailing one makes none); its table's rows are
    /// the lines up to the next blank one.
    static func tableCells(_ markdown: String) -> Int {
        var cells = 0
        var columns = 0  // of the table the current line may belong to; 0 outside one
        for line in markdown.utf8.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            let isBlank = line.allSatisfy { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") || $0 == UInt8(ascii: "\r") }
            if isBlank {
                columns = 0
            } else if line.contains(UInt8(ascii: "|")), line.contains(UInt8(ascii: "-")), line.allSatisfy(Self.isDelimiterRowByte) {
                columns = line.count { $0 == UInt8(ascii: "|") } + 1
            } else {
                cells += columns
            }
        }
        return cells
    }

    private static func isDelimiterRowByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "|"), UInt8(ascii: "-"), UInt8(ascii: ":"), UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"),
            UInt8(ascii: ">"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "."), UInt8(ascii: ")"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default:
            false
        }
    }

    /// The deepest a line's block quotes and list items may nest.
    static let nestingLimit = 32

    /// `markdown` with the container markers that open a line escaped past `nestingLimit`, so
    /// the rest of the line is text: cmark-gfm's work on a line grows with its nesting times its
    /// emphasis delimiters, and 10,000 `>` before 10,000 `a*` (30 KB) took seconds.
    static func boundingNesting(_ markdown: String) -> String {
        var bytes = Array(markdown.utf8)
        var escapes: [Int] = []  // offsets to put a backslash before
        var index = 0
        while index < bytes.count {
            var depth = 0
            var marker = index
            scan: while marker < bytes.count {
                switch bytes[marker] {
                case UInt8(ascii: " "), UInt8(ascii: "\t"):
                    marker += 1
                    continue scan
                case UInt8(ascii: ">"):
                    depth += 1
                    if depth > nestingLimit { escapes.append(marker); break scan }
                    marker += 1
                case UInt8(ascii: "-"), UInt8(ascii: "*"), UInt8(ascii: "+") where Self.isMarkerEnd(bytes, marker + 1):
                    depth += 1
                    if depth > nestingLimit { escapes.append(marker); break scan }
                    marker += 1
                case UInt8(ascii: "0")...UInt8(ascii: "9"):
                    var end = marker
                    while end < bytes.count, end - marker < 9, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[end]) { end += 1 }
                    guard end < bytes.count, bytes[end] == UInt8(ascii: ".") || bytes[end] == UInt8(ascii: ")"), Self.isMarkerEnd(bytes, end + 1) else {
                        break scan
                    }
                    depth += 1
                    if depth > nestingLimit { escapes.append(end); break scan }
                    marker = end + 1
                default:
                    break scan
                }
            }
            index = (bytes[marker...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.count - 1) + 1
        }
        guard !escapes.isEmpty else { return markdown }
        for offset in escapes.reversed() { bytes.insert(UInt8(ascii: "\\"), at: offset) }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Whether a list marker ends at `offset`: a space, a tab or the end of the line follows.
    private static func isMarkerEnd(_ bytes: [UInt8], _ offset: Int) -> Bool {
        offset == bytes.count || [UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r")].contains(bytes[offset])
    }
}
