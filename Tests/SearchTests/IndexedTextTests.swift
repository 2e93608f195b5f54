import Testing

@testable import SearchService

/// A text is kept as its tokens' numbers in a variable-length code: every number comes back,
/// however many bytes it takes, and the words' lexemes and bytes are the table's.
@Suite struct IndexedTextTests {
    @Test func everyTokenNumberComesBackAsWritten() {
        let numbers: [UInt32] = [0, 127, 128, 300, 16_383, 16_384, 2_097_151, 2_097_152, UInt32.max, 5, 1]
        #expect(Array(IndexedText(tokens: numbers).tokens) == numbers)
        #expect(IndexedText(tokens: numbers).wordCount == 5)
        #expect(Array(IndexedText(tokens: []).tokens).isEmpty)
    }

    @Test func aTextIsItsTokensWithTheirLexemes() {
        let table = TokenTable()
        let tokens = ["", "Kayaks", " on the ", "river", "."]
        let text = IndexedText(tokens: table.number(tokens, lexemes: [7, 9]))
        let again = IndexedText(tokens: table.number(["", "river", " "], lexemes: [9]))
        #expect(table.size.count == 6)  // "", "river" again; " "
        table.read { tokens in
            #expect(text.text(in: tokens) == "Kayaks on the river.")
            #expect(text.lexemes(in: tokens) == [7, 9])
            #expect(text.firstWord(in: [9], table: tokens) == 1)
            #expect(text.split(matched: [9], table: tokens).html() == "Kayaks on the <mark>river</mark>.")
            #expect(again.text(in: tokens) == "river ")
        }
    }
}

/// Searches read the texts of their results while the index's writer adds tokens: a reader
/// holds nothing up, and what it reads stays as it was when it began.
@Suite struct TokenTableReadingTests {
    @Test func theWriterAddsTokensWhileAReaderReads() {
        let table = TokenTable()
        let text = IndexedText(tokens: table.number(["", "Kayaks", " on the ", "river", "."], lexemes: [7, 9]))
        table.read { tokens in
            let added = IndexedText(tokens: table.number(["", "canoe", "!"], lexemes: [11]))
            #expect(text.text(in: tokens) == "Kayaks on the river.")
            table.read { now in #expect(added.text(in: now) == "canoe!") }
        }
        #expect(table.size.count == 7)
    }
}
