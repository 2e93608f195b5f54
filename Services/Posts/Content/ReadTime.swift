import PostlyMarkdown

/// Minutes to read a text: `max(1, round(words / 200))`, words split on white space,
/// rounding half to even as the earlier backend did (500 words -> 2, 700 -> 4).
public enum ReadTime {
    public static func minutes(for content: String) -> Int {
        let words = PlainText.words(in: content).count
        return max(1, Int((Double(words) / 200).rounded(.toNearestOrEven)))
    }
}
