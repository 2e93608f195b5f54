import PostlyMarkdown
import Testing

/// The byte-level split of ASCII text must be the Character-level split, word for word.
@Suite struct PlainTextTests {
    static let samples = [
        "", " ", "one", "  two  words  ", "tabs\tand\nnew\r\nlines\u{0B}vertical\u{0C}feed",
        "control\u{01}chars\u{1F}are\u{7F}words", "punctuation, stays. with-words!",
        "Crème brûlée, naïve café", "non breaking\u{00A0}space and\u{2003}em space", "emoji 😀 and 👩‍👩‍👧 family",
        " \u{301}combining after a space", "\r\n", "ideographic\u{3000}space",
    ]

    @Test(arguments: samples)
    func splitsAsCharacterWhiteSpaceDoes(text: String) {
        #expect(PlainText.words(in: text) == text.split(whereSeparator: \.isWhitespace))
    }

    @Test func splitsEveryASCIICharacterAsCharacterWhiteSpaceDoes() {
        let everyASCII = String(String.UnicodeScalarView((0..<0x80).map { Unicode.Scalar(UInt8($0)) }))
        let text = (0..<20).map { _ in String(everyASCII.shuffled()) }.joined()
        #expect(PlainText.words(in: text) == text.split(whereSeparator: \.isWhitespace))
    }
}
