/// Request bodies that every JSON route of every service answers 400 for, with a problem
/// document, changing nothing. Each says what is wrong with it.
public enum BadJSONBodies {
    public static let all: [(problem: String, bytes: [UInt8])] = [
        ("malformed", Array(#"{"title": "#.utf8)),
        ("trailing data", Array(#"{"title": "x"} trailing"#.utf8)),
        ("two values", Array(#"{"title": "x"}{"title": "y"}"#.utf8)),
        ("invalid UTF-8", Array(#"{"title": ""#.utf8) + [0xFF, 0xFE] + Array(#""}"#.utf8)),
        ("empty", []),
        ("an array", Array(#"[{"title": "x"}]"#.utf8)),
        ("a string", Array(#""title""#.utf8)),
        ("null", Array("null".utf8)),
        ("a number", Array("42".utf8)),
        ("a duplicate key", Array(#"{"title": "x", "title": "y"}"#.utf8)),
        ("a duplicate key spelled with an escape", Array(#"{"title": "x", "\u0074itle": "y"}"#.utf8)),
        ("a duplicate key in a nested object", Array(#"{"extra": {"a": 1, "a": 2}}"#.utf8)),
        ("nesting deeper than 64", Array(("{\"extra\": " + String(repeating: "[", count: 64) + String(repeating: "]", count: 64) + "}").utf8)),
        ("single quotes", Array("{'title': 'x'}".utf8)),
        ("a comment", Array(#"{"title": "x" /* hi */}"#.utf8)),
        ("NaN", Array(#"{"title": NaN}"#.utf8)),
        ("a trailing comma in an object", Array(#"{"title": "x",}"#.utf8)),
        ("a trailing comma before whitespace", Array("{\"title\": \"x\" ,\n }".utf8)),
        ("a trailing comma in a nested object", Array(#"{"title": "x", "extra": {"a": 1,}}"#.utf8)),
        ("a trailing comma in an array", Array(#"{"title": "x", "extra": [1, 2,]}"#.utf8)),
    ]

    /// The deepest nesting a body may have (the object itself counts as one level).
    public static let deepestAccepted = Array(("{\"extra\": " + String(repeating: "[", count: 63) + String(repeating: "]", count: 63) + "}").utf8)
}
